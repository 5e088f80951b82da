package whale.task.searchqa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import whale.harness.ArchiveEntry;
import whale.harness.ArchiveView;
import whale.harness.CompiledHarness;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.EpisodeStatus;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessCompiler;
import whale.harness.TraceStats;
import whale.task.searchqa.SearchQaGenome.Axis;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.task.Split;
import whale.task.TaskProblem;
import whale.task.searchqa.SearchQaTask;

/** The search-QA template library: every axis compiles and runs, and the search reads the archive. */
class SearchQaTemplatesTest {
  static final HarnessCompiler COMPILER = new HarnessCompiler();
  static final SearchQaTask TASK = SearchQaTask.builtin(1234, 16, 16, 16);
  static final SearchQaTemplates LIB = new SearchQaTemplates();
  /**
   * A stand-in model for the harness mechanics (SearchQaRsftTest runs templates on the real DJL
   * model in sandboxes): it answers with the first word of the first document it is shown, so every
   * call parses and a two-hop harness always searches a second time.
   */
  static final Generator FIRST_WORD = (requests, params) -> {
    List<Completion> out = new ArrayList<>();
    for (GenerationRequest r : requests) {
      String firstLine = r.prompt().split("\n")[0];
      String[] words = firstLine.substring(firstLine.indexOf(' ') + 1).split("\\s+");
      String text = " " + words[0].replaceAll("[^A-Za-z]", "") + "\n";
      out.add(new Completion(text, r.prompt().length(), text.length()));
    }
    return out;
  };

  @Test
  void h0IsTheUnoptimisedOneHopHarnessAndCompiles() throws Exception {
    HarnessCandidate h0 = LIB.initial();
    assertEquals(SearchQaGenome.initial(), SearchQaGenome.SPACE.fromSource(h0.source()));
    assertEquals("whale.generated." + SearchQaGenome.initial().className(), COMPILER.compile(h0.source()).className());
  }

  @Test
  void everyValueOfEveryAxisCompilesAndRunsOnARealModel() throws Exception {
    List<SearchQaGenome> genomes = new ArrayList<>();
    genomes.add(SearchQaGenome.initial());
    for (Axis a : Axis.values()) {
      genomes.addAll(SearchQaGenome.initial().neighbours(a));
    }
    genomes.add(SearchQaGenome.SPACE.parse("query=ENTITY;docs=2;chars=100;format=DQA;hops=TWO;votes=3;parse=CLAUSE;maxNew=12"));
    EpisodeRunner runner = new EpisodeRunner(FIRST_WORD, TASK);
    List<TaskProblem> problems = TASK.split(Split.HARNESS).subList(0, 1);
    for (SearchQaGenome g : genomes) {
      String source = SearchQaRenderer.render(g);
      assertEquals(g, SearchQaGenome.SPACE.fromSource(source));
      CompiledHarness h = COMPILER.compile(source);
      List<EpisodeResult> results = runner.run(h, problems, 1, 5);
      for (EpisodeResult r : results) {
        assertEquals(EpisodeStatus.COMPLETED, r.status(), g.code() + ": " + r.error());
        assertEquals(g.hops() == SearchQaGenome.Hops.TWO ? 2 : 1, r.toolCalls().size(), g.code());
        assertEquals(r.toolCalls().size() * g.votes(), r.turns(), g.code());
        String prompt = r.modelCalls().get(0).prompt();
        if (g.form() == whale.harness.HarnessForm.CHAT) {
          // the same prompt as the user's message, through the (builtin) chat template
          List<whale.chat.Message> asked = r.modelCalls().get(0).chat().messages();
          assertEquals(1, asked.size());
          assertEquals("Q: " + asked.get(0).content() + "\nA: ", prompt);
          prompt = asked.get(0).content();
        }
        assertTrue(prompt.startsWith(g.format().docLiteral) && prompt.endsWith(g.format().answerLiteral), prompt);
        assertTrue(prompt.split("\n").length <= g.docs() + 2, "at most " + g.docs() + " documents: " + prompt);
      }
    }
  }

  @Test
  void twoHopsSearchForTheBridgeTheModelNamed() throws Exception {
    SearchQaGenome g = SearchQaGenome.SPACE.parse("query=RAW;docs=2;chars=100;format=DQA;hops=TWO;votes=1;parse=LINE;maxNew=24");
    CompiledHarness h = COMPILER.compile(SearchQaRenderer.render(g));
    EpisodeResult r = new EpisodeRunner(FIRST_WORD, TASK).run(h, TASK.split(Split.TEST).subList(0, 1), 1, 9).get(0);
    String bridge = r.modelCalls().get(0).completion().split("\n")[0].trim();
    assertEquals(bridge.endsWith(".") ? bridge.substring(0, bridge.length() - 1).trim() : bridge,
        r.toolCalls().get(1).input());
    assertEquals(2, r.modelCalls().size());
  }

  @Test
  void proposalsAreDeterministicNewAndReadTheArchive() throws Exception {
    HarnessCandidate h0 = LIB.initial();
    ArchiveView archive = new ArchiveView(List.of(ArchiveEntry.scored(h0.name(), h0.source(),
        new TraceStats(16, 0.1, 1, 0, 0, 0, 0, 20))));
    List<HarnessCandidate> first = LIB.propose(archive, 3, 42, false);
    assertEquals(first, LIB.propose(archive, 3, 42, false));
    assertEquals(3, first.size());
    Set<SearchQaGenome> seen = new HashSet<>(Set.of(SearchQaGenome.initial()));
    for (HarnessCandidate c : first) {
      SearchQaGenome g = SearchQaGenome.SPACE.fromSource(c.source());
      assertNotNull(g);
      assertTrue(seen.add(g), "never re-proposed: " + g.code());
      assertTrue(COMPILER.tryCompile(c.source()).ok(), c.name());
      assertFalse(c.hypothesis().isBlank());
    }
    // turn-budget hits on a voting parent steer towards fewer votes
    SearchQaGenome voting = SearchQaGenome.initial().with(Axis.VOTES, "5");
    ArchiveView busy = new ArchiveView(List.of(ArchiveEntry.scored("v5", SearchQaRenderer.render(voting),
        new TraceStats(16, 0.2, 16, 0, 0.5, 0, 0, 40))));
    HarnessCandidate fewer = LIB.propose(busy, 1, 1, false).get(0);
    assertTrue(SearchQaGenome.SPACE.fromSource(fewer.source()).votes() < 5, fewer.changes());
    // an archive of many rounds never repeats itself
    seen.clear();
    seen.add(SearchQaGenome.initial());
    List<ArchiveEntry> entries = new ArrayList<>(archive.entries());
    for (int it = 0; it < 6; it++) {
      for (HarnessCandidate c : LIB.propose(new ArchiveView(entries), 3, it, false)) {
        assertTrue(seen.add(SearchQaGenome.SPACE.fromSource(c.source())), c.name());
        entries.add(ArchiveEntry.scored(c.name(), c.source(), new TraceStats(16, 0.05 * it, 1, 0, 0, 0, 0, 10)));
      }
    }
  }

  @Test
  void theChatFormIsProposedOnlyWithChatForm() {
    HarnessCandidate h0 = LIB.initial();
    ArchiveView archive = new ArchiveView(List.of(ArchiveEntry.scored(h0.name(), h0.source(),
        new TraceStats(16, 0.1, 1, 0, 0, 0, 0, 20))));
    assertEquals(LIB.propose(archive, 3, 42, false), LIB.propose(archive, 3, 42, false, false));
    assertTrue(LIB.propose(archive, 30, 42, false).stream().allMatch(c ->
        SearchQaGenome.SPACE.fromSource(c.source()).form() == whale.harness.HarnessForm.COMPLETION));
    HarnessCandidate chat = LIB.propose(archive, 30, 42, false, true).stream().filter(c ->
        SearchQaGenome.SPACE.fromSource(c.source()).form() == whale.harness.HarnessForm.CHAT)
        .findFirst().orElseThrow();
    assertTrue(chat.name().endsWith("-chat") && chat.source().contains("ctx.chat(List.of(Message.user(prompt))"),
        chat.source());
    assertTrue(COMPILER.tryCompile(chat.source()).ok(), chat.name());
  }

  @Test
  void promptOnlyChangesOnlyThePromptLiterals() {
    HarnessCandidate h0 = LIB.initial();
    ArchiveView archive = new ArchiveView(List.of(ArchiveEntry.scored(h0.name(), h0.source(), TraceStats.EMPTY)));
    List<HarnessCandidate> out = LIB.propose(archive, 3, 7, true);
    assertEquals(2, out.size(), "two other label formats, then nothing new to propose");
    for (HarnessCandidate c : out) {
      SearchQaGenome g = SearchQaGenome.SPACE.fromSource(c.source());
      assertEquals(SearchQaGenome.initial().with(Axis.FORMAT, g.format().name()), g);
      assertEquals(stripLiterals(h0.source()).replace(SearchQaGenome.initial().className(), "X"),
          stripLiterals(c.source()).replace(g.className(), "X"), "only string literals (and names) differ");
    }
  }

  /** The source without string literals and comments, what the Fast-Slow control compares. */
  static String stripLiterals(String s) {
    return s.replaceAll("\"(?:\\\\.|[^\"\\\\])*\"", "\"\"").replaceAll("//[^\n]*|/\\*[\\s\\S]*?\\*/", "");
  }
}
