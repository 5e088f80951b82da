package whale.task.math;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import whale.harness.HarnessCompilerTest;
import whale.task.math.MathGenome.Axis;
import whale.task.math.MathGenome.Decomposition;
import whale.task.math.MathGenome.PromptFormat;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.task.math.MathTask;
import whale.task.Problem;
import whale.task.Split;
import whale.harness.ArchiveEntry;
import whale.harness.ArchiveView;
import whale.harness.CompiledHarness;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.EpisodeStatus;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessCompiler;
import whale.harness.HarnessForm;
import whale.harness.ModelCall;
import whale.harness.TraceStats;

public class MathTemplatesTest {
  static final HarnessCompiler COMPILER = HarnessCompilerTest.COMPILER;
  static final MathTask TASK = new MathTask(7, 8, 64, 8);

  /**
   * A stand-in model that solves a prompt's question only when it is ONE step ("X has N obj. One op.
   * How many...?"); multi-step questions get a wrong number. Answers " n\n" whatever the format.
   */
  static final class OneStepOracle implements Generator {
    static final Pattern Q = Pattern.compile("(?:Q: |Question: )?(.*?)\\n(?:A:|Answer:|The answer is)$", Pattern.DOTALL);

    @Override
    public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
      List<Completion> out = new ArrayList<>();
      for (GenerationRequest r : requests) {
        Matcher m = Q.matcher(r.prompt());
        String text = " 0\n";
        if (m.matches()) {
          String[] s = new MathTask.SentencesTool().apply(m.group(1)).split("\n");
          if (s.length == 3) {
            int v = Integer.parseInt(s[0].replaceAll("\\D", ""));
            text = " " + whale.task.math.MathTaskTestAccess.apply(v, s[1]) + "\n";
          } else {
            text = " " + (Math.floorMod(r.seed(), 7) + 100) + "\n";
          }
        }
        out.add(new Completion(text, r.prompt().length(), text.length()));
      }
      return out;
    }
  }

  @Test
  void initialHarnessIsPlainDirectAndCompiles() throws Exception {
    String src = MathTemplates.initialHarnessSource();
    MathGenome g = MathGenome.SPACE.fromSource(src);
    assertEquals(MathGenome.initial(), g);
    assertEquals(PromptFormat.QA, g.format());
    assertEquals(Decomposition.DIRECT, g.decomposition());
    assertEquals(1, g.votes());
    CompiledHarness ch = COMPILER.compile(src);
    HarnessCompilerTest.FixedContext ctx = new HarnessCompilerTest.FixedContext();
    assertEquals("7", ch.newInstance().solve(new Problem("p", "Tom has 3 pens. He buys 4 more. How many pens does Tom have?"), ctx).answer());
    assertEquals(1, ctx.turns);
    assertEquals(g, MathGenome.SPACE.parse(g.encode()));
  }

  /** harness.initialForm: h0's genome with only its FORM changed, for every task that has it. */
  @Test
  void initialHarnessInEachFormIsH0AskedThatWay() throws Exception {
    assertEquals(new MathTemplates().initial(), new MathTemplates().initial(HarnessForm.COMPLETION));
    for (HarnessForm f : List.of(HarnessForm.CHAT, HarnessForm.TOOLS)) {
      HarnessCandidate c = new MathTemplates().initial(f);
      MathGenome g = MathGenome.SPACE.fromSource(c.source());
      MathGenome h0 = MathGenome.initial();
      assertEquals(new MathGenome(h0.format(), h0.decomposition(), h0.votes(), h0.retries(),
          h0.parsing(), h0.maxNewTokens(), f), g);
      assertEquals("h0-" + g.code(), c.name());
      assertTrue(c.source().contains(f.call()), c.source());
      COMPILER.compile(c.source());
    }
    HarnessCandidate chess = new whale.task.chess.ChessTemplates().initial(HarnessForm.CHAT);
    assertEquals(HarnessForm.CHAT, whale.task.chess.ChessGenome.SPACE.fromSource(chess.source()).form());
    COMPILER.compile(chess.source());
    HarnessCandidate sq = new whale.task.searchqa.SearchQaTemplates().initial(HarnessForm.CHAT);
    assertEquals(HarnessForm.CHAT,
        whale.task.searchqa.SearchQaGenome.SPACE.fromSource(sq.source()).form());
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class,
        () -> new whale.task.chess.ChessTemplates().initial(HarnessForm.TOOLS));
    assertEquals("this task's templates have no tools form of h0", e.getMessage());
  }

  @Test
  void everyGenomeCompilesAndRuns() throws Exception {
    List<MathGenome> all = MathGenome.SPACE.all();
    assertEquals(3 * 2 * 3 * 3 * 3 * 3 * 3, all.size(), "six axes and the three forms");
    Set<String> names = new HashSet<>();
    for (MathGenome g : all) {
      String src = MathTemplates.render(g);
      assertEquals(g, MathGenome.SPACE.fromSource(src));
      assertTrue(names.add(g.className()));
      // votes, retries and the token limit are constants in the code: 1 and 3 votes, 0 and 1
      // retries and one limit cover every code path (compiling all 1458 takes 40 s)
      if (g.votes() == 5 || g.retries() == 2 || g.maxNewTokens() != 8) {
        continue;
      }
      HarnessCompiler.Result r = COMPILER.tryCompile(src);
      assertTrue(r.ok(), g.code() + ":\n" + r.errorText() + "\n" + src);
      assertEquals("whale.generated." + g.className(), r.harness().className());
      HarnessCompilerTest.FixedContext ctx = new HarnessCompilerTest.FixedContext();
      String answer = r.harness().newInstance()
          .solve(new Problem("p", "Tom has 3 pens. He buys 4 more. He loses 1. How many pens does Tom have?"), ctx)
          .answer();
      assertEquals("7", answer, g.code());
      int steps = g.decomposition() == Decomposition.CHAIN ? 2 : 1;
      assertEquals(steps * g.votes(), ctx.turns, g.code());
    }
  }

  @Test
  void chainLetsAOneStepModelSolveMultiStepProblems() throws Exception {
    EpisodeRunner runner = new EpisodeRunner(new OneStepOracle(), TASK);
    MathGenome direct = new MathGenome(PromptFormat.QA, Decomposition.DIRECT, 1, 0,
        MathGenome.AnswerParsing.FIRST_INT, 8);
    MathGenome chain = new MathGenome(PromptFormat.QA, Decomposition.CHAIN, 1, 0,
        MathGenome.AnswerParsing.FIRST_INT, 8);
    List<EpisodeResult> d = runner.run(COMPILER.compile(MathTemplates.render(direct)), TASK.split(Split.HARNESS), 1, 1L);
    List<EpisodeResult> c = runner.run(COMPILER.compile(MathTemplates.render(chain)), TASK.split(Split.HARNESS), 1, 1L);
    assertEquals(0.0, TraceStats.of(d, TASK).successRate());
    TraceStats cs = TraceStats.of(c, TASK);
    assertEquals(1.0, cs.successRate());
    assertTrue(cs.meanTurns() >= 2 && cs.meanTurns() <= 3);
    // each chain step prompt is a one-step question in the pretraining format
    for (ModelCall mc : c.get(0).modelCalls()) {
      assertTrue(mc.prompt().startsWith("Q: ") && mc.prompt().endsWith("\nA:"), mc.prompt());
      assertEquals(3, new MathTask.SentencesTool().apply(mc.prompt().substring(3, mc.prompt().length() - 3)).split("\n").length);
    }
  }

  static ArchiveEntry entry(MathGenome g, double success, double turns, double unparseable, double budget) {
    TraceStats st = new TraceStats(64, success, turns, unparseable, budget, 0, 0, 3);
    return new ArchiveEntry(g.code(), MathTemplates.render(g), true, null, success, turns, st);
  }

  @Test
  void chatFormProposalsAskThroughTheChatTemplateAndCompletionOnesStayAsTheyWere() throws Exception {
    MathGenome h0 = MathGenome.initial();
    assertEquals("format=QA;decomp=DIRECT;votes=1;retries=0;parse=FIRST_INT;maxNew=16", h0.encode(),
        "the completion form is left out of the genome line: archived genomes keep their sources");
    ArchiveView archive = new ArchiveView(List.of(entry(h0, 0.1, 1, 0.05, 0)));
    MathTemplates p = new MathTemplates();
    assertEquals(p.propose(archive, 3, 11L), p.propose(archive, 3, 11L, false, false));
    boolean sawChat = false;
    for (long seed = 0; seed < 3; seed++) {
      // FORM ranks last among h0's single changes: ask for all of them
      for (HarnessCandidate c : p.propose(archive, 16, seed, false, true)) {
        MathGenome g = MathGenome.SPACE.fromSource(c.source());
        if (g.form() == HarnessForm.CHAT) {
          sawChat = true;
          assertTrue(c.source().contains("ctx.chat(List.of(Message.user(prompt)), ChatOptions.of(4 * MAX_NEW_TOKENS))"));
          assertTrue(g.encode().endsWith(";form=CHAT") && c.name().endsWith("-chat"), g.encode());
          // through the builtin model's chat template the question reads as the pretraining format
          EpisodeRunner runner = new EpisodeRunner(new OneStepOracle(), TASK);
          List<EpisodeResult> rs = runner.run(COMPILER.compile(c.source()), TASK.split(Split.HARNESS).subList(0, 2), 1, 1L);
          for (EpisodeResult r : rs) {
            assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
            assertTrue(r.modelCalls().get(0).chat() != null);
            assertTrue(r.modelCalls().get(0).prompt().startsWith("Q: "), r.modelCalls().get(0).prompt());
          }
        }
      }
    }
    assertTrue(sawChat, "harness.chatForm lets the search propose the chat form");
  }

  /**
   * A stand-in for a model pretrained on the chat corpus: asked a one-step question in the builtin
   * template it calls calc on the step; shown calc's result it answers with it.
   */
  public static final class CalcCaller implements Generator {
    @Override
    public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
      List<Completion> out = new ArrayList<>();
      for (GenerationRequest r : requests) {
        String[] lines = r.prompt().split("\n");
        String last = lines[lines.length - 1].equals("A: ") ? lines[lines.length - 2] : "";
        String text = "7\n";
        if (last.startsWith("Tool calc: ")) {
          text = last.substring("Tool calc: ".length()) + "\n";
        } else if (last.startsWith("Q: ")) {
          text = "<tool_call>{\"name\": \"calc\", \"arguments\": {\"input\": \""
              + MathTask.stepOf(last.substring(3)) + "\"}}</tool_call>\n";
        }
        out.add(new Completion(text, r.prompt().length(), text.length()));
      }
      return out;
    }
  }

  @Test
  void toolsFormIsProposedWhenTheModelCallsToolsAndRunsItsCalls() throws Exception {
    MathGenome h0 = MathGenome.initial();
    TraceStats calling = new TraceStats(64, 0.0, 1, 0, 0, 0, 0, 70, 0.9);
    ArchiveView archive = new ArchiveView(List.of(
        new ArchiveEntry(h0.code(), MathTemplates.render(h0), true, null, 0.0, 1, calling)));
    MathTemplates p = new MathTemplates();
    for (long seed = 0; seed < 3; seed++) {
      HarnessCandidate first = p.propose(archive, 3, seed, false, true).get(0);
      assertEquals(HarnessForm.TOOLS, MathGenome.SPACE.fromSource(first.source()).form(),
          first.name());
      assertTrue(first.hypothesis().contains("90% of the model's completions are tool calls"),
          first.hypothesis());
    }
    // without the signal, FORM keeps its low prior: h0's first proposal is not the TOOLS form
    ArchiveView quiet = new ArchiveView(List.of(entry(h0, 0.1, 1, 0.05, 0)));
    assertTrue(MathGenome.SPACE.fromSource(p.propose(quiet, 1, 0L, false, true).get(0).source()).form()
        != HarnessForm.TOOLS);

    MathGenome tools = new MathGenome(MathGenome.PromptFormat.QA, Decomposition.CHAIN, 1, 0,
        MathGenome.AnswerParsing.FIRST_INT, 8, HarnessForm.TOOLS);
    String src = MathTemplates.render(tools);
    assertEquals(tools, MathGenome.SPACE.fromSource(src));
    assertTrue(tools.encode().endsWith(";form=TOOLS") && tools.code().endsWith("-tools"), tools.encode());
    EpisodeRunner runner = new EpisodeRunner(new CalcCaller(), TASK);
    List<EpisodeResult> rs = runner.run(COMPILER.compile(src), TASK.split(Split.HARNESS).subList(0, 4), 1, 1L);
    for (EpisodeResult r : rs) {
      assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
      assertEquals(1.0, r.reward(), r.toString());
      long steps = r.toolCalls().stream().filter(t -> t.name().equals("calc")).count();
      assertEquals(2 * steps, r.turns(), "a call and an answer per step: " + r);
      assertTrue(steps >= 2, "every step through calc: " + r);
      assertTrue(r.modelCalls().get(1).prompt().endsWith("Tool calc: " + r.toolCalls().get(1).output()
          + "\nA: "), r.modelCalls().get(1).prompt());
    }
  }

  @Test
  void proposesDistinctCompilableCandidatesDeterministically() throws Exception {
    MathTemplates p = new MathTemplates();
    ArchiveView archive = new ArchiveView(List.of(entry(MathGenome.initial(), 0.1, 1, 0.05, 0)));
    List<HarnessCandidate> a = p.propose(archive, 3, 11L);
    assertEquals(a, p.propose(archive, 3, 11L));
    assertEquals(3, a.size());
    Set<MathGenome> seen = new HashSet<>();
    seen.add(MathGenome.initial());
    for (HarnessCandidate c : a) {
      assertTrue(seen.add(MathGenome.SPACE.fromSource(c.source())), c.name());
      assertFalse(c.hypothesis().isBlank());
      assertTrue(c.changes().contains("->"));
      COMPILER.compile(c.source());
    }
    assertEquals(3, p.propose(ArchiveView.empty(), 3, 1L).size());
  }

  @Test
  void neverReproposesAnArchivedGenome() {
    MathTemplates p = new MathTemplates();
    List<ArchiveEntry> entries = new ArrayList<>();
    entries.add(entry(MathGenome.initial(), 0.1, 1, 0, 0));
    Set<MathGenome> seen = new HashSet<>();
    seen.add(MathGenome.initial());
    for (int it = 0; it < 40; it++) {
      for (HarnessCandidate c : p.propose(new ArchiveView(entries), 3, it)) {
        MathGenome g = MathGenome.SPACE.fromSource(c.source());
        assertTrue(seen.add(g), "re-proposed " + g.code() + " at iteration " + it);
        // a fake score: chain and QA help, votes help a little
        double s = 0.1 + (g.decomposition() == Decomposition.CHAIN ? 0.3 : 0)
            + (g.format() == PromptFormat.QA ? 0.2 : 0) + 0.02 * g.votes();
        entries.add(it % 7 == 3 ? ArchiveEntry.invalid(c.name(), c.source(), "line 1:1: broken")
            : entry(g, s, g.votes(), 0, 0));
      }
    }
    assertEquals(121, seen.size());
  }

  @Test
  void tracesSteerTheMutation() {
    MathTemplates p = new MathTemplates();
    MathGenome h0 = MathGenome.initial();
    for (long seed = 0; seed < 5; seed++) {
      HarnessCandidate c = p.propose(new ArchiveView(List.of(entry(h0, 0.05, 1, 0.8, 0))), 1, seed).get(0);
      assertTrue(Set.of("parsing", "retries", "format").contains(c.axis()), c.axis());
      assertTrue(c.hypothesis().contains("unparseable"), c.hypothesis());
    }
    MathGenome heavy = new MathGenome(PromptFormat.QA, Decomposition.CHAIN, 5, 2,
        MathGenome.AnswerParsing.FIRST_INT, 8);
    for (long seed = 0; seed < 5; seed++) {
      HarnessCandidate c = p.propose(new ArchiveView(List.of(entry(heavy, 0.3, 15, 0, 0.4))), 1, seed).get(0);
      MathGenome g = MathGenome.SPACE.fromSource(c.source());
      assertTrue(g.votes() < 5 || g.retries() < 2, c.changes());
      assertTrue(c.hypothesis().contains("turn budget"), c.hypothesis());
    }
  }

  @Test
  void promptOnlyProposerChangesOnlyTheFormat() {
    MathTemplates fst = new MathTemplates(EnumSet.of(Axis.FORMAT));
    MathGenome h0 = MathGenome.initial();
    List<HarnessCandidate> cs = fst.propose(new ArchiveView(List.of(entry(h0, 0.1, 1, 0, 0))), 3, 5L);
    assertEquals(2, cs.size(), "only two other formats exist");
    for (HarnessCandidate c : cs) {
      MathGenome g = MathGenome.SPACE.fromSource(c.source());
      assertNotNull(g);
      assertEquals(new MathGenome(g.format(), h0.decomposition(), h0.votes(), h0.retries(), h0.parsing(),
          h0.maxNewTokens()), g);
    }
  }
}
