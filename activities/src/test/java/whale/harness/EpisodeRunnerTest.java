package whale.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.model.SftExample;
import whale.task.math.MathTask;
import whale.task.TaskProblem;

@Timeout(60)
class EpisodeRunnerTest {
  static final MathTask TASK = new MathTask(1, 4, 4, 4);

  /** Completion = (seed mod 10) then newline; counts batches. */
  static final class ScriptedGenerator implements Generator {
    final List<List<GenerationRequest>> batches = Collections.synchronizedList(new ArrayList<>());

    @Override
    public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
      batches.add(List.copyOf(requests));
      List<Completion> out = new ArrayList<>();
      for (GenerationRequest r : requests) {
        String text = Math.floorMod(r.seed(), 10) + "\n";
        out.add(new Completion(text, r.prompt().length(), text.length()));
      }
      return out;
    }
  }

  static List<TaskProblem> problems(int n) {
    List<TaskProblem> ps = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ps.add(new TaskProblem("p" + i, "Tom has " + i + " apples. How many apples does Tom have?", "" + (i % 10)));
    }
    return ps;
  }

  /** Calls the model (1 + id-digit % 3) times, answers with the last completion. */
  static Harness varyingHarness() {
    return (problem, ctx) -> {
      int calls = 1 + Integer.parseInt(problem.id().substring(1)) % 3;
      String last = "";
      for (int i = 0; i < calls; i++) {
        last = ctx.generate("Q: " + problem.question() + " #" + i + "\nA:", 4);
      }
      ctx.tool("sentences", problem.question());
      ctx.note("calls=" + calls);
      return HarnessResult.of(last.trim());
    };
  }

  @Test
  void eachConfigWitherChangesItsFieldsOnly() {
    EpisodeRunner.Config d = EpisodeRunner.Config.defaults();
    SamplingParams greedy = new SamplingParams(0.0, 1);
    EpisodeRunner.Config c = d.withTurnBudget(3).withEpisodeTimeout(Duration.ofMillis(7))
        .withMaxConcurrentEpisodes(5).withModelLimits(new whale.model.ModelLimits(900, 33))
        .withSampling(greedy).withMaxTemperature(1.5);
    assertEquals(new EpisodeRunner.Config(3, Duration.ofMillis(7), d.maxAnswerChars(),
        d.maxNoteChars(), d.maxNotes(), d.maxToolCalls(), 900, 33, d.maxTraceChars(), 5, greedy, 1.5),
        c);
    assertEquals(d, c.withTurnBudget(d.turnBudget()).withEpisodeTimeout(d.episodeTimeout())
        .withMaxConcurrentEpisodes(d.maxConcurrentEpisodes())
        .withModelLimits(new whale.model.ModelLimits(d.maxPromptChars(), d.maxNewTokensCap()))
        .withSampling(d.sampling()).withMaxTemperature(d.maxTemperature()));
    assertEquals(SamplingParams.ROLLOUT.temperature(), d.temperatureBound());
    assertEquals(1.5, c.temperatureBound());
  }

  @Test
  void deterministicAndBatchedInLockStep() {
    ScriptedGenerator g1 = new ScriptedGenerator();
    EpisodeRunner r1 = new EpisodeRunner(g1, TASK);
    List<List<Integer>> ids = new ArrayList<>();
    r1.setBatchListener((episodeIds, requests) -> ids.add(episodeIds));
    List<EpisodeResult> a = r1.run(EpisodeRunnerTest::varyingHarness, problems(6), 3, 42L);
    assertEquals(18, a.size());
    // problems p0..p5 make 1,2,3,1,2,3 calls: batches hold all live episodes: 18, then 12, then 6
    assertEquals(List.of(18, 12, 6), g1.batches.stream().map(List::size).toList());
    for (List<Integer> b : ids) {
      List<Integer> sorted = new ArrayList<>(b);
      Collections.sort(sorted);
      assertEquals(sorted, b, "batches are sorted by episode id");
    }
    assertEquals(List.of(3, 4, 5, 6, 7, 8, 12, 13, 14, 15, 16, 17), ids.get(1));

    ScriptedGenerator g2 = new ScriptedGenerator();
    List<EpisodeResult> b = new EpisodeRunner(g2, TASK).run(EpisodeRunnerTest::varyingHarness, problems(6), 3, 42L);
    assertEquals(a, b, "same seeds give the same episodes");
    assertEquals(g1.batches, g2.batches, "same batches");

    List<EpisodeResult> c = new EpisodeRunner(new ScriptedGenerator(), TASK)
        .run(EpisodeRunnerTest::varyingHarness, problems(6), 3, 43L);
    assertNotEquals(a, c, "another run seed gives other samples");

    for (EpisodeResult e : a) {
      assertEquals(EpisodeStatus.COMPLETED, e.status());
      assertNull(e.error());
      int p = Integer.parseInt(e.problemId().substring(1));
      assertEquals(1 + p % 3, e.turns());
      assertEquals(a.indexOf(e) % 3, e.sampleIndex());
      for (ModelCall mc : e.modelCalls()) {
        assertEquals(EpisodeSeeds.requestSeed(42L, e.problemId(), e.sampleIndex(), mc.callIndex()), mc.seed());
        assertEquals(Math.floorMod(mc.seed(), 10) + "\n", mc.completion());
      }
      assertEquals(e.answer().equals(String.valueOf(p % 10)) ? 1.0 : 0.0, e.reward());
      assertEquals(1, e.toolCalls().size());
      assertEquals("sentences", e.toolCalls().get(0).name());
      assertTrue(e.toolCalls().get(0).output().contains("\n"));
      assertEquals(List.of("calls=" + (1 + p % 3)), e.notes());
    }
  }

  @Test
  void seedsDependOnEveryComponent() {
    long s = EpisodeSeeds.requestSeed(1, "p", 0, 0);
    assertEquals(s, EpisodeSeeds.requestSeed(1, "p", 0, 0));
    assertNotEquals(s, EpisodeSeeds.requestSeed(2, "p", 0, 0));
    assertNotEquals(s, EpisodeSeeds.requestSeed(1, "q", 0, 0));
    assertNotEquals(s, EpisodeSeeds.requestSeed(1, "p", 1, 0));
    assertNotEquals(s, EpisodeSeeds.requestSeed(1, "p", 0, 1));
  }

  @Test
  void concurrencyCapAdmitsInOrderAndStaysDeterministic() {
    ScriptedGenerator g = new ScriptedGenerator();
    EpisodeRunner r = new EpisodeRunner(g, TASK, EpisodeRunner.Config.defaults().withMaxConcurrentEpisodes(4));
    List<List<Integer>> ids = new ArrayList<>();
    r.setBatchListener((episodeIds, requests) -> ids.add(episodeIds));
    List<EpisodeResult> a = r.run(EpisodeRunnerTest::varyingHarness, problems(5), 2, 7L);
    assertEquals(10, a.size());
    assertTrue(ids.stream().allMatch(b -> b.size() <= 4));
    assertEquals(List.of(0, 1, 2, 3), ids.get(0));
    assertEquals(2 * (1 + 2 + 3 + 1 + 2), g.batches.stream().mapToInt(List::size).sum());
    ScriptedGenerator g2 = new ScriptedGenerator();
    EpisodeRunner r2 = new EpisodeRunner(g2, TASK, EpisodeRunner.Config.defaults().withMaxConcurrentEpisodes(4));
    List<List<Integer>> ids2 = new ArrayList<>();
    r2.setBatchListener((episodeIds, requests) -> ids2.add(episodeIds));
    assertEquals(a, r2.run(EpisodeRunnerTest::varyingHarness, problems(5), 2, 7L));
    assertEquals(ids, ids2);
  }

  @Test
  void turnBudgetExceededFailsEpisodeEvenIfCaught() {
    Harness greedy = (problem, ctx) -> {
      String last = "";
      for (int i = 0; i < 20; i++) {
        try {
          last = ctx.generate("x", 2);
        } catch (RuntimeException e) {
          ctx.note("caught " + e.getMessage());
          break;
        }
      }
      return HarnessResult.of(last.trim());
    };
    List<EpisodeResult> res = new EpisodeRunner(new ScriptedGenerator(), TASK).run(() -> greedy, problems(2), 1, 1L);
    for (EpisodeResult e : res) {
      assertEquals(EpisodeStatus.TURN_BUDGET_EXCEEDED, e.status());
      assertEquals(0.0, e.reward());
      assertEquals(16, e.turns());
      assertTrue(e.error().contains("turn budget"), e.error());
    }
  }

  @Test
  void runawayEpisodeIsAbandonedOthersContinue() {
    AtomicInteger spins = new AtomicInteger();
    Harness sometimesLoops = (problem, ctx) -> {
      String a = ctx.generate("first", 2);
      if (problem.id().equals("p1")) {
        long x = 0;
        while (x >= 0) {
          x = (x + 1) & 0xffffff;
          if (x == 0) {
            spins.incrementAndGet();
          }
        }
      }
      String b = ctx.generate("second", 2);
      return HarnessResult.of(b.trim());
    };
    EpisodeRunner runner = new EpisodeRunner(new ScriptedGenerator(), TASK,
        EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofMillis(300)));
    long t0 = System.nanoTime();
    List<EpisodeResult> res = runner.run(() -> sometimesLoops, problems(3), 1, 3L);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms < 5000, "took " + ms);
    assertEquals(EpisodeStatus.COMPLETED, res.get(0).status());
    assertEquals(2, res.get(0).turns());
    assertEquals(EpisodeStatus.TIMEOUT, res.get(1).status());
    assertEquals(0.0, res.get(1).reward());
    assertTrue(res.get(1).error().startsWith("timeout"), res.get(1).error());
    assertEquals(EpisodeStatus.COMPLETED, res.get(2).status());
    int after = spins.get();
    try {
      Thread.sleep(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    assertEquals(after, spins.get(), "the runaway thread was stopped");
  }

  @Test
  void exceptionsAndCapsAreRecorded() {
    Harness h = (problem, ctx) -> {
      if (problem.id().equals("p0")) {
        throw new IllegalStateException("boom");
      }
      if (problem.id().equals("p1")) {
        ctx.tool("calculator", "1+1");
      }
      for (int i = 0; i < 100; i++) {
        ctx.note("n".repeat(5000));
      }
      return HarnessResult.of("9".repeat(1000));
    };
    List<EpisodeResult> res = new EpisodeRunner(new ScriptedGenerator(), TASK).run(() -> h, problems(3), 1, 3L);
    assertEquals(EpisodeStatus.ERROR, res.get(0).status());
    assertTrue(res.get(0).error().contains("boom"));
    assertEquals(EpisodeStatus.ERROR, res.get(1).status());
    assertTrue(res.get(1).error().contains("unknown tool"), res.get(1).error());
    assertEquals(1, res.get(1).toolCalls().size());
    EpisodeResult e = res.get(2);
    assertEquals(EpisodeStatus.COMPLETED, e.status());
    assertEquals(256, e.answer().length());
    assertEquals(65, e.notes().size());
    assertEquals(1000, e.notes().get(0).length());
    assertEquals(0.0, e.reward());
  }

  @Test
  void generatorFailureFailsTheRun() {
    Generator broken = (requests, params) -> {
      throw new IllegalStateException("model down");
    };
    Harness h = (problem, ctx) -> HarnessResult.of(ctx.generate("x", 2));
    assertThrows(IllegalStateException.class,
        () -> new EpisodeRunner(broken, TASK).run(() -> h, problems(3), 2, 1L));
  }

  @Test
  void acceptedEpisodesBecomeSftExamples() {
    Harness h = (problem, ctx) -> {
      String a = ctx.generate("Q: " + problem.question() + "\nA:", 4);
      return HarnessResult.of(a.trim());
    };
    List<EpisodeResult> res = new EpisodeRunner(new ScriptedGenerator(), TASK).run(() -> h, problems(10), 8, 5L);
    List<SftExample> sft = EpisodeResult.acceptedSftExamples(res);
    long accepted = res.stream().filter(EpisodeResult::accepted).count();
    assertTrue(accepted > 0 && accepted < res.size());
    assertEquals(accepted, sft.size());
    for (SftExample ex : sft) {
      assertTrue(ex.prompt().startsWith("Q: ") && ex.prompt().endsWith("\nA:"));
      assertTrue(ex.parts().get(1).endsWith("\n"));
    }
  }

  @Test
  void compiledHarnessRunsInEpisodes() throws Exception {
    String src = "package whale.generated;\nimport whale.harness.*;\nimport whale.task.Problem;\n"
        + "public class Echo implements Harness {\n"
        + "  public HarnessResult solve(Problem p, HarnessContext ctx) {\n"
        + "    return HarnessResult.of(ctx.generate(\"Q: \" + p.question() + \"\\nA:\", 4).trim());\n"
        + "  }\n}\n";
    CompiledHarness ch = new HarnessCompiler().compile(src);
    List<EpisodeResult> res = new EpisodeRunner(new ScriptedGenerator(), TASK).run(ch, problems(4), 2, 9L);
    assertEquals(8, res.size());
    assertTrue(res.stream().allMatch(e -> e.status() == EpisodeStatus.COMPLETED && e.turns() == 1));
  }

  @Test
  void toolInputOverTheCapFailsTheCallWithAClearMessage() {
    Harness h = (problem, ctx) -> {
      try {
        ctx.tool("sentences", "x".repeat(10 << 20));
      } catch (IllegalArgumentException e) {
        ctx.note(e.getMessage());
      }
      String ok = ctx.tool("sentences", "y".repeat(EpisodeRunner.MAX_TOOL_INPUT_CHARS));
      return HarnessResult.of(String.valueOf(ok.length()));
    };
    List<EpisodeResult> res = new EpisodeRunner(new ScriptedGenerator(), TASK).run(() -> h, problems(1), 1, 3L);
    EpisodeResult e = res.get(0);
    assertEquals(EpisodeStatus.COMPLETED, e.status(), e.error());
    assertEquals(List.of("tool 'sentences': input of 10485760 characters exceeds the cap of "
        + EpisodeRunner.MAX_TOOL_INPUT_CHARS), e.notes());
    assertEquals(2, e.toolCalls().size());
    assertTrue(e.toolCalls().get(0).output().startsWith("ERROR: tool 'sentences': input of 10485760"),
        e.toolCalls().get(0).output());
    assertEquals(EpisodeRunner.Config.defaults().maxTraceChars(), e.toolCalls().get(0).input().length());
    assertEquals(String.valueOf(EpisodeRunner.MAX_TOOL_INPUT_CHARS), e.answer());
  }

  @Test
  void aRunawayInNestedFinallyLoopsIsStoppedBeforeTheRunReturns() throws InterruptedException {
    java.util.concurrent.atomic.AtomicReference<Thread> episodeThread = new java.util.concurrent.atomic.AtomicReference<>();
    AtomicInteger spins = new AtomicInteger();
    Harness stubborn = (problem, ctx) -> {
      episodeThread.set(Thread.currentThread());
      try {
        try {
          try {
            while (true) {
              spins.incrementAndGet();
            }
          } finally {
            while (true) {
              spins.incrementAndGet();
            }
          }
        } finally {
          while (true) {
            spins.incrementAndGet();
          }
        }
      } finally {
        while (true) {
          spins.incrementAndGet();
        }
      }
    };
    List<EpisodeResult> res = new EpisodeRunner(new ScriptedGenerator(), TASK,
        EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofMillis(200))).run(() -> stubborn, problems(1), 1, 3L);
    assertEquals(EpisodeStatus.TIMEOUT, res.get(0).status());
    Thread t = episodeThread.get();
    t.join(1000);
    // one stop per finally level: the harness's code cannot run once its episode is over
    assertFalse(t.isAlive(), "episode thread still running: " + java.util.Arrays.toString(t.getStackTrace()));
    int after = spins.get();
    Thread.sleep(100);
    assertEquals(after, spins.get());
  }
}
