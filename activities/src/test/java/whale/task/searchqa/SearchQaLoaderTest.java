package whale.task.searchqa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.TaskCatalog;
import whale.store.ArtifactStore;
import whale.task.Jsonl;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.activities.TaskRef;

/** SearchQA / NQ / HotpotQA-style JSONL with a user corpus, through the task catalog. */
class SearchQaLoaderTest {
  @TempDir Path dir;

  /** One line per dataset shape the loader reads. */
  static final List<String> TRAIN = List.of(
      // Natural Questions (open): answer list
      "{\"question\": \"who discovered x-rays\", \"answer\": [\"Wilhelm Roentgen\", \"Roentgen\"]}",
      // HotpotQA: _id, answer string, extra fields
      "{\"_id\": \"5a8b57f2\", \"answer\": \"yes\", \"question\": \"Were Scott Derrickson and Ed Wood of the same "
          + "nationality?\", \"type\": \"comparison\", \"level\": \"hard\", \"supporting_facts\": [[\"Ed Wood\", 0]]}",
      // Search-R1 / FlashRAG
      "{\"id\": \"train_2\", \"question\": \"what is the capital of france\", \"golden_answers\": [\"Paris\"]}",
      // SearchQA (Jeopardy!) answer string
      "{\"question\": \"This river flows through Cairo\", \"answer\": \"the Nile\", \"category\": \"RIVERS\"}",
      // TriviaQA: value and aliases
      "{\"question\": \"Which planet is the red planet?\", \"answer\": {\"value\": \"Mars\", \"aliases\": [\"Mars\", "
          + "\"Planet Mars\"]}}",
      // SQuAD-style answers object
      "{\"query\": \"where is the eiffel tower\", \"answers\": {\"text\": [\"Paris\", \"in Paris\"], "
          + "\"answer_start\": [0, 3]}}",
      "",
      "{\"question\": \"how many legs does a spider have\", \"answer\": 8}",
      "{\"question\": \"who wrote hamlet\", \"answers\": [\"William Shakespeare\"]}",
      "{\"question\": \"who discovered x-rays\", \"answer\": \"a duplicate is dropped\"}",
      "{\"question\": \"what is the largest ocean\", \"answer\": \"Pacific Ocean\"}",
      "{\"question\": \"what gas do plants absorb\", \"answer\": \"carbon dioxide\"}");
  static final List<String> TEST = List.of(
      "{\"question\": \"who painted the mona lisa\", \"answer\": [\"Leonardo da Vinci\"]}",
      "{\"question\": \"what is the capital of japan\", \"answer\": [\"Tokyo\"]}",
      "{\"question\": \"who wrote hamlet\", \"answers\": [\"in training, so dropped from D_test\"]}",
      "{\"question\": \"what is the boiling point of water in celsius\", \"answer\": [\"100\"]}");
  static final List<String> CORPUS = List.of(
      "{\"id\": \"d1\", \"title\": \"Wilhelm Roentgen\", \"text\": \"Wilhelm Roentgen discovered x-rays in 1895.\"}",
      "{\"id\": \"d2\", \"title\": \"Paris\", \"text\": \"Paris is the capital of France and home of the Eiffel Tower.\"}",
      "{\"id\": \"d3\", \"contents\": \"The Nile flows through Cairo, the capital of Egypt.\"}",
      "{\"id\": \"d4\", \"title\": \"Mona Lisa\", \"text\": \"The Mona Lisa was painted by Leonardo da Vinci.\"}",
      "{\"id\": \"d5\", \"title\": \"Tokyo\", \"text\": \"Tokyo is the capital of Japan.\"}");

  private Path write(String name, List<String> lines) throws IOException {
    return Files.write(dir.resolve(name), lines);
  }

  private TaskRef ref(Path train, Path test, Path corpus, int w, int h, int t) {
    return new TaskRef("searchqa", 5, w, h, t, "jsonl", train.toString(), test == null ? null : test.toString(),
        corpus.toString());
  }

  @Test
  void readsEveryShapeSplitsDisjointlyAndSearchesTheCorpus() throws IOException {
    Path train = write("train.jsonl", TRAIN);
    Path test = write("test.jsonl", TEST);
    Path corpus = write("corpus.jsonl", CORPUS);
    ArtifactStore store = new ArtifactStore(dir.resolve("store"));
    Task task = TaskCatalog.create(ref(train, test, corpus, 7, 3, 3), store);
    assertEquals(List.of(7, 3, 3), List.of(task.split(Split.WEIGHT).size(), task.split(Split.HARNESS).size(),
        task.split(Split.TEST).size()));
    Set<String> seen = new HashSet<>();
    for (Split s : Split.values()) {
      for (TaskProblem p : task.split(s)) {
        assertTrue(seen.add(p.question()), "splits are disjoint: " + p.question());
      }
    }
    assertFalse(task.split(Split.TEST).stream().anyMatch(p -> p.question().equals("who wrote hamlet")));

    SearchQaTask sq = (SearchQaTask) task;
    assertEquals(List.of("Wilhelm Roentgen", "Roentgen"), answersOf(sq, "who discovered x-rays"));
    assertEquals(List.of("Mars", "Planet Mars"), answersOf(sq, "Which planet is the red planet?"));
    assertEquals(List.of("Paris", "in Paris"), answersOf(sq, "where is the eiffel tower"));
    assertEquals(List.of("8"), answersOf(sq, "how many legs does a spider have"));
    TaskProblem xrays = problem(sq, "who discovered x-rays");
    assertEquals(1.0, task.verify(xrays, "roentgen"), "any gold answer counts");
    assertEquals(0.0, task.verify(xrays, "a duplicate is dropped"), "the first line of a question wins");
    TaskProblem nile = problem(sq, "This river flows through Cairo");
    assertEquals(1.0, task.verify(nile, "Nile"));

    String hits = task.tool("search").apply("who painted the Mona Lisa");
    assertEquals("Mona Lisa: The Mona Lisa was painted by Leonardo da Vinci.", hits.split("\n")[0]);
    assertTrue(task.tool("search").apply("river Cairo").startsWith("The Nile flows"), "a corpus without titles");
    sq.index().close();
  }

  @Test
  void theCorpusIsIndexedOnceAndTheIndexReusedFromTheStore() throws IOException {
    Path corpus = write("corpus.jsonl", CORPUS);
    ArtifactStore store = new ArtifactStore(dir.resolve("store"));
    CorpusIndexCache.Opened first = CorpusIndexCache.open(store, corpus);
    assertTrue(first.built());
    assertEquals(5, first.index().size());
    CorpusIndexCache.Opened again = CorpusIndexCache.open(store, corpus);
    assertFalse(again.built(), "the second open reads the cached index");
    assertEquals(first.dir(), again.dir());
    assertEquals(first.index().search("capital of Japan", 3), again.index().search("capital of Japan", 3));
    // a copy of the same corpus elsewhere, in a new store object over the same directory: same index
    Path copy = Files.copy(corpus, dir.resolve("copy.jsonl"));
    CorpusIndexCache.Opened fromCopy = CorpusIndexCache.open(new ArtifactStore(dir.resolve("store")), copy);
    assertFalse(fromCopy.built());
    fromCopy.index().close();
    // through the catalog too
    Task task = TaskCatalog.create(ref(write("train.jsonl", TRAIN), null, copy, 5, 2, 2), store);
    assertEquals("Tokyo is the capital of Japan.", task.tool("search").apply("capital of Japan").split("\n")[0]);
    ((SearchQaTask) task).index().close();
    // an edited corpus is a different index
    Files.writeString(corpus, CORPUS.get(0) + "\n");
    CorpusIndexCache.Opened edited = CorpusIndexCache.open(store, corpus);
    assertTrue(edited.built());
    assertEquals(1, edited.index().size());
    for (CorpusIndexCache.Opened o : List.of(first, again, edited)) {
      o.index().close();
    }
  }

  @Test
  void malformedFilesAreRejectedWithFileAndLine() throws IOException {
    Path corpus = write("corpus.jsonl", CORPUS);
    Path train = write("train.jsonl", TRAIN);
    assertBad(write("a.jsonl", List.of(TRAIN.get(0), "{\"question\": \"q\", \"answer\": [\"a\"]")),
        "a.jsonl:2: not valid JSON", corpus);
    assertBad(write("b.jsonl", List.of(TRAIN.get(0), "", "[\"q\", \"a\"]")), "b.jsonl:3: expected a JSON object",
        corpus);
    assertBad(write("c.jsonl", List.of("{\"question\": \"q\"}")), "c.jsonl:1: no answer field", corpus);
    assertBad(write("d.jsonl", List.of("{\"answer\": \"a\"}")), "d.jsonl:1: no question field", corpus);
    assertBad(write("e.jsonl", List.of("{\"question\": \"q\", \"answer\": []}")), "e.jsonl:1: no non-empty answer",
        corpus);
    assertBad(write("f.jsonl", List.of("{\"question\": 5, \"answer\": \"a\"}")), "f.jsonl:1: question", corpus);
    assertBad(write("g.jsonl", List.of("{\"question\": \"q\", \"answer\": [true]}")),
        "g.jsonl:1: answers must be strings", corpus);
    Path badCorpus = write("bad-corpus.jsonl", List.of(CORPUS.get(0), "{\"id\": \"d2\", \"title\": \"T\"}"));
    Exception e = assertThrows(IllegalArgumentException.class,
        () -> TaskCatalog.create(ref(train, null, badCorpus, 5, 2, 2), new ArtifactStore(dir.resolve("s2"))));
    assertTrue(e.getMessage().contains("bad-corpus.jsonl:2: no document text field"), e.getMessage());
    Exception few = assertThrows(IllegalArgumentException.class,
        () -> TaskCatalog.create(ref(train, null, corpus, 8, 2, 2), null));
    assertTrue(few.getMessage().contains("10 distinct problems, the spec needs 12"), few.getMessage());
  }

  private void assertBad(Path train, String expected, Path corpus) {
    Exception e = assertThrows(Jsonl.MalformedFileException.class,
        () -> TaskCatalog.create(ref(train, null, corpus, 1, 1, 1), null));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  private static TaskProblem problem(SearchQaTask task, String question) {
    for (Split s : Split.values()) {
      for (TaskProblem p : task.split(s)) {
        if (p.question().equals(question)) {
          return p;
        }
      }
    }
    throw new AssertionError("no problem " + question);
  }

  private static List<String> answersOf(SearchQaTask task, String question) {
    return task.answers(problem(task, question));
  }
}
