package whale.task.chess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.wolfraam.chessgame.ChessGame;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import whale.harness.ArchiveEntry;
import whale.harness.ArchiveView;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.EpisodeStatus;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessCompiler;
import whale.harness.TraceStats;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.sandbox.SandboxExecutor;
import whale.task.Split;
import whale.task.TaskProblem;
import whale.task.chess.ChessGenome.Axis;

/** The chess harness templates: they compile under the allow-list, run, and the search moves on. */
@Timeout(600)
class ChessTemplatesTest {
  static final HarnessCompiler COMPILER = new HarnessCompiler();
  static final ChessTask TASK = ChessTask.builtin(1234, 8, 16, 8);

  /**
   * A stand-in model for harness plumbing only (the learning tests use the real model): it mates when
   * the prompt is a piece list followed by "Mate:", and otherwise writes "e2e4" (not legal here).
   */
  static final class PieceReader implements Generator {
    @Override
    public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
      List<Completion> out = new ArrayList<>();
      for (GenerationRequest r : requests) {
        String text = " e2e4\n";
        String p = r.prompt();
        if (p.startsWith("Pieces: ") && p.endsWith("\nMate:")) {
          text = " " + mate(p.substring(8, p.indexOf('\n'))) + "\n";
        }
        out.add(new Completion(text, p.length(), text.length()));
      }
      return out;
    }

    /** Finds the position with this piece list among the task's problems. */
    private static String mate(String pieces) {
      for (Split s : Split.values()) {
        for (TaskProblem q : TASK.split(s)) {
          if (Boards.pieces(Boards.game(ChessTask.fenOf(q.question()))).equals(pieces)) {
            return q.answer();
          }
        }
      }
      return "a1a1";
    }
  }

  static EpisodeRunner.Config config() {
    return EpisodeRunner.Config.defaults().withTurnBudget(16);
  }

  @Test
  void everyGenomeCompilesAndH0IsTheUnoptimisedOne() throws Exception {
    Set<String> names = new HashSet<>();
    for (ChessGenome g : ChessGenome.SPACE.all()) {
      String src = ChessTemplates.render(g);
      assertEquals(g, ChessGenome.SPACE.fromSource(src));
      assertEquals(g, ChessGenome.SPACE.parse(g.encode()));
      assertTrue(names.add(g.className()));
      // votes and retries are only constants in the code: one value each covers every code path
      if (g.votes() == 3 && g.retries() == 1) {
        HarnessCompiler.Result r = COMPILER.tryCompile(src);
        assertTrue(r.ok(), g.code() + ": " + r.errorText());
      }
    }
    HarnessCandidate h0 = new ChessTemplates().initial();
    assertEquals(ChessGenome.initial(), ChessGenome.SPACE.fromSource(h0.source()));
    assertEquals(ChessGenome.Board.FEN, ChessGenome.initial().board());
    assertEquals(ChessGenome.Cue.MOVE, ChessGenome.initial().cue());
  }

  @Test
  void templatesRunInTheEpisodeRunnerAndOnlyTheModelsMovesScore() throws Exception {
    List<TaskProblem> problems = TASK.split(Split.HARNESS);
    ChessGenome good = new ChessGenome(ChessGenome.Board.PIECES, ChessGenome.Cue.MATE, 3, 1,
        ChessGenome.Parsing.FIRST_MOVE);
    EpisodeRunner runner = new EpisodeRunner(new PieceReader(), TASK, config());
    List<EpisodeResult> h0 = runner.run(COMPILER.compile(new ChessTemplates().initial().source()), problems, 1, 5);
    List<EpisodeResult> best = runner.run(COMPILER.compile(ChessTemplates.render(good)), problems, 1, 5);
    assertEquals(0.0, TraceStats.of(h0, TASK).successRate());
    assertEquals(1.0, TraceStats.of(best, TASK).successRate());
    for (EpisodeResult e : best) {
      assertEquals(EpisodeStatus.COMPLETED, e.status(), e.error());
      assertEquals(3, e.turns(), "three votes, each legal at once");
    }
    // retries re-ask while the move is illegal: h0's FEN prompt gets "e2e4" three times over
    ChessGenome retry = new ChessGenome(ChessGenome.Board.FEN, ChessGenome.Cue.MOVE, 1, 2,
        ChessGenome.Parsing.WHOLE_LINE);
    EpisodeResult r = runner.run(COMPILER.compile(ChessTemplates.render(retry)), problems.subList(0, 1), 1, 5).get(0);
    assertEquals(3, r.turns());
    assertEquals("e2e4", r.answer());
  }

  /** A harness that answers the right move itself (from the tools) scores 0: the provenance rule. */
  @Test
  void aHarnessThatChoosesTheMoveItselfScoresNothing() throws Exception {
    String cheat = """
        package whale.generated;

        import whale.harness.Harness;
        import whale.harness.HarnessContext;
        import whale.harness.HarnessResult;
        import whale.task.Problem;

        public final class Cheat implements Harness {
          @Override
          public HarnessResult solve(Problem problem, HarnessContext ctx) {
            String q = problem.question();
            String fen = q.substring(q.indexOf("FEN: ") + 5).trim();
            ctx.generate("FEN: " + fen + "\\nMove:", 8);
            // tries every legal move with the tools and keeps the one after which nothing is legal
            for (String m : ctx.tool("legal", fen).split(" ")) {
              String next = ctx.tool("move", fen + " | " + m);
              if (ctx.tool("legal", next).equals("none")) {
                return HarnessResult.of(m);
              }
            }
            return HarnessResult.of("");
          }
        }
        """;
    List<TaskProblem> problems = TASK.split(Split.TEST);
    List<EpisodeResult> rs = new EpisodeRunner(new PieceReader(), TASK, config())
        .run(COMPILER.compile(cheat), problems, 1, 5);
    int right = 0;
    for (int i = 0; i < rs.size(); i++) {
      EpisodeResult e = rs.get(i);
      assertEquals(EpisodeStatus.COMPLETED, e.status(), e.error());
      right += TASK.verify(problems.get(i), e.answer()) > 0 ? 1 : 0;
      assertEquals(0.0, e.reward(), "the model never wrote " + e.answer());
    }
    assertTrue(right >= problems.size() / 2, "the harness found most mates itself: " + right);
  }

  @Test
  void templatesRunInTheSandbox() throws Exception {
    ChessGenome g = new ChessGenome(ChessGenome.Board.PIECES, ChessGenome.Cue.MATE, 1, 1,
        ChessGenome.Parsing.FIRST_MOVE);
    try (SandboxExecutor sandbox = SandboxExecutor.create(1, 256)) {
      List<EpisodeResult> rs = sandbox.run(new PieceReader(), TASK, ChessTemplates.render(g),
          TASK.split(Split.TEST), 2, 9, config(), line -> { });
      assertEquals(16, rs.size());
      for (EpisodeResult e : rs) {
        assertEquals(EpisodeStatus.COMPLETED, e.status(), e.error());
        assertEquals(1.0, e.reward(), "tools over gRPC, verified by the worker with the trace");
      }
    }
  }

  @Test
  void proposalsAreNewCompilableAndFollowTheTraces() throws Exception {
    ChessTemplates lib = new ChessTemplates();
    ChessGenome h0 = ChessGenome.initial();
    // many answers that are not moves: parsing, retries or the cue move first
    ArchiveEntry bad = ArchiveEntry.scored("h0", ChessTemplates.render(h0),
        new TraceStats(16, 0.05, 1, 0.6, 0, 0, 0, 5));
    List<HarnessCandidate> cs = lib.propose(new ArchiveView(List.of(bad)), 3, 11L, false);
    assertEquals(3, cs.size());
    assertEquals(cs.stream().map(HarnessCandidate::source).toList(),
        lib.propose(new ArchiveView(List.of(bad)), 3, 11L, false).stream().map(HarnessCandidate::source).toList(),
        "deterministic for (archive, m, seed)");
    Set<ChessGenome> seen = new HashSet<>(List.of(h0));
    for (HarnessCandidate c : cs) {
      ChessGenome g = ChessGenome.SPACE.fromSource(c.source());
      assertNotNull(g);
      assertTrue(seen.add(g), "never an archived or repeated genome: " + g);
      assertTrue(COMPILER.tryCompile(c.source()).ok());
    }
    assertTrue(cs.stream().anyMatch(c -> c.axis().equals("parsing") || c.axis().equals("retries")),
        "unparseable answers steer towards parsing or retries: " + cs.stream().map(HarnessCandidate::changes).toList());
    // the whole genome space gets explored without repeats (the chat form with harness.chatForm)
    List<ArchiveEntry> archive = new ArrayList<>();
    Set<ChessGenome> all = new HashSet<>();
    for (int it = 0; it < 400 && all.size() < ChessGenome.SPACE.all().size(); it++) {
      List<HarnessCandidate> next = lib.propose(new ArchiveView(archive), 3, it, false, true);
      if (next.isEmpty()) {
        break;
      }
      for (HarnessCandidate c : next) {
        assertTrue(all.add(ChessGenome.SPACE.fromSource(c.source())), "re-proposed " + c.name());
        archive.add(ArchiveEntry.scored(c.name(), c.source(), new TraceStats(8, 0.1, 1, 0, 0, 0, 0, 5)));
      }
    }
    assertEquals(ChessGenome.SPACE.all().size(), all.size());
  }

  /**
   * harness.chatForm lets the search write the chat form: the same prompt, position and cue, as the
   * user's message through the model's chat template; without it no proposal is in that form.
   */
  @Test
  void chatFormAsksThroughTheChatTemplateOnlyWithChatForm() throws Exception {
    ChessTemplates lib = new ChessTemplates();
    ChessGenome h0 = ChessGenome.initial();
    ArchiveView archive = new ArchiveView(List.of(ArchiveEntry.scored("h0", ChessTemplates.render(h0),
        new TraceStats(16, 0.1, 1, 0, 0, 0, 0, 5))));
    assertEquals(lib.propose(archive, 3, 5L, false), lib.propose(archive, 3, 5L, false, false));
    for (HarnessCandidate c : lib.propose(archive, 20, 5L, false)) {
      assertEquals(whale.harness.HarnessForm.COMPLETION, ChessGenome.SPACE.fromSource(c.source()).form());
    }
    HarnessCandidate chat = lib.propose(archive, 20, 5L, false, true).stream()
        .filter(c -> ChessGenome.SPACE.fromSource(c.source()).form() == whale.harness.HarnessForm.CHAT)
        .findFirst().orElseThrow();
    assertTrue(chat.name().endsWith("-chat") && chat.source().contains(";form=CHAT"), chat.name());
    EpisodeResult r = new EpisodeRunner(new PieceReader(), TASK, config())
        .run(COMPILER.compile(chat.source()), TASK.split(Split.HARNESS).subList(0, 1), 1, 5).get(0);
    assertEquals(whale.harness.EpisodeStatus.COMPLETED, r.status(), r.error());
    assertNotNull(r.modelCalls().get(0).chat(), "a chat call");
    assertTrue(r.modelCalls().get(0).prompt().startsWith("Q: FEN: ")
        && r.modelCalls().get(0).prompt().endsWith("\nMove:\nA: "), r.modelCalls().get(0).prompt());
  }

  @Test
  void promptOnlyChangesOnlyTheCue() {
    ChessGenome h0 = ChessGenome.initial();
    ArchiveEntry e = ArchiveEntry.scored("h0", ChessTemplates.render(h0), new TraceStats(8, 0.1, 1, 0, 0, 0, 0, 5));
    List<HarnessCandidate> cs = new ChessTemplates().propose(new ArchiveView(List.of(e)), 3, 3L, true);
    assertEquals(2, cs.size(), "two other cues exist");
    for (HarnessCandidate c : cs) {
      ChessGenome g = ChessGenome.SPACE.fromSource(c.source());
      assertEquals(new ChessGenome(h0.board(), g.cue(), h0.votes(), h0.retries(), h0.parsing()), g);
    }
    assertEquals(EnumSet.of(Axis.CUE).size(), 1);
  }

  /** The position's board text for a problem (used to sanity-check the stand-in model). */
  static String pieces(TaskProblem p) {
    ChessGame g = Boards.game(ChessTask.fenOf(p.question()));
    return Boards.pieces(g);
  }
}
