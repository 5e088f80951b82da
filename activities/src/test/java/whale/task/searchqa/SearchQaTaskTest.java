package whale.task.searchqa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import whale.task.Split;
import whale.task.TaskProblem;

/** The built-in search-QA task: splits, verifier, search tool and pretraining corpus. */
class SearchQaTaskTest {
  static final SearchQaTask TASK = SearchQaTask.builtin(1234, 256, 64, 64);

  @Test
  void splitsAreDisjointDeterministicAndMixOneAndTwoHops() {
    assertEquals(List.of(256, 64, 64), List.of(TASK.split(Split.WEIGHT).size(), TASK.split(Split.HARNESS).size(),
        TASK.split(Split.TEST).size()));
    Set<String> questions = new HashSet<>();
    int twoHop = 0;
    for (Split s : Split.values()) {
      for (TaskProblem p : TASK.split(s)) {
        assertTrue(questions.add(p.question()), "duplicate " + p.question());
        twoHop += p.question().contains(" of ") ? 1 : 0;
      }
    }
    assertTrue(twoHop > 384 / 4 && twoHop < 384 * 3 / 4, "two-hop questions: " + twoHop);
    SearchQaTask again = SearchQaTask.builtin(1234, 256, 64, 64);
    for (Split s : Split.values()) {
      assertEquals(TASK.split(s), again.split(s));
    }
    assertNotEquals(TASK.split(Split.TEST), SearchQaTask.builtin(1235, 256, 64, 64).split(Split.TEST));
  }

  @Test
  void verifierIsNormalizedExactMatchAgainstAnyGoldAnswer() {
    TaskProblem p = new TaskProblem("x", "Who wrote it?", "The Old Man and the Sea");
    assertEquals(1.0, TASK.verify(p, "the old man and the sea"));
    assertEquals(1.0, TASK.verify(p, "  Old Man and Sea. "));
    assertEquals(0.0, TASK.verify(p, "Old Man"));
    assertEquals(0.0, TASK.verify(p, ""));
    assertEquals(0.0, TASK.verify(p, null));
    assertEquals("mexico city", AnswerMatch.normalize("México  City!"));
    assertTrue(AnswerMatch.matches("JFK", List.of("John F. Kennedy", "JFK")));
    assertFalse(AnswerMatch.matches("the", List.of("a")), "nothing left after normalization is never right");
    TaskProblem built = TASK.split(Split.TEST).get(0);
    assertEquals(1.0, TASK.verify(built, built.answer().toUpperCase() + "."));
    assertEquals(0.0, TASK.verify(built, built.answer() + "x"));
  }

  @Test
  void searchRanksTheDocumentHoldingTheAnswerFirst() {
    FactWorld world = FactWorld.withQuestions(1234, 384);
    SearchTool tool = (SearchTool) TASK.tool(SearchTool.NAME);
    int oneHop = 0;
    int first = 0;
    for (FactWorld.Fact f : world.facts()) {
      if (f.hops() == 1) {
        oneHop++;
        String top = tool.apply(f.question()).split("\n")[0];
        first += top.equals(f.evidence()) ? 1 : 0;
      }
    }
    assertTrue(first >= 0.95 * oneHop, first + " of " + oneHop + " one-hop questions find their document first");
    String[] hits = tool.apply("Who founded " + world.docs().get(world.docs().size() / 2).title() + "?").split("\n");
    assertEquals(SearchTool.RESULTS, hits.length);
    assertEquals("", tool.apply("the of and"), "only stop words: no results");
    assertEquals(tool.apply("capital river"), tool.apply("capital river"), "deterministic");
  }

  @Test
  void pretrainingCorpusIsReadingComprehensionWithoutSplitQuestions() {
    List<String> corpus = TASK.pretrainingCorpus(7, 3000);
    assertEquals(corpus, TASK.pretrainingCorpus(7, 3000));
    Set<String> questions = new HashSet<>();
    for (Split s : Split.values()) {
      TASK.split(s).forEach(p -> questions.add(p.question()));
    }
    for (String doc : corpus) {
      assertTrue(doc.startsWith("D: ") && doc.endsWith("\n"), doc);
      String q = doc.substring(doc.indexOf("\nQ: ") + 4, doc.indexOf("\nA: "));
      String a = doc.substring(doc.indexOf("\nA: ") + 4, doc.length() - 1);
      assertFalse(questions.contains(q), q);
      assertTrue(doc.substring(0, doc.indexOf("\nQ: ")).contains(a), "the answer is a span of a document: " + doc);
      assertTrue(doc.length() <= 240, doc);
    }
  }
}
