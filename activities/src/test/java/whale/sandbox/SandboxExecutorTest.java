package whale.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.EpisodeStatus;
import whale.harness.HarnessCompiler;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.task.math.MathTask;
import whale.task.Split;
import whale.task.TaskProblem;

@Timeout(180)
class SandboxExecutorTest {
  static final MathTask TASK = new MathTask(1, 4, 6, 4);
  static SandboxExecutor sandbox;

  /** Completion = (seed mod 10) then newline; records batch sizes. */
  static final class Scripted implements Generator {
    final List<Integer> batchSizes = Collections.synchronizedList(new ArrayList<>());

    @Override
    public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
      batchSizes.add(requests.size());
      List<Completion> out = new ArrayList<>();
      for (GenerationRequest r : requests) {
        String text = Math.floorMod(r.seed(), 10) + "\n";
        out.add(new Completion(text, r.prompt().length(), text.length()));
      }
      return out;
    }
  }

  static final String TWO_CALLS = """
      import whale.harness.*;
      import whale.task.Problem;
      public class TwoCalls implements Harness {
        public HarnessResult solve(Problem p, HarnessContext ctx) {
          String a = ctx.generate("Q: " + p.question() + "\\nA:", 4);
          String s = ctx.tool("sentences", p.question());
          String b = ctx.generate("Again: " + a, 4);
          return HarnessResult.of(b.trim());
        }
      }
      """;

  static EpisodeRunner.Config config(int timeoutMillis) {
    return EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofMillis(timeoutMillis));
  }

  @BeforeAll
  static void start() {
    sandbox = new SandboxExecutor(SandboxPool.forThisJvm(2, 256), new SandboxHost(), 20, 3000);
  }

  @AfterAll
  static void stop() {
    sandbox.close();
  }

  @Test
  @Timeout(120)
  void withOneShardPerRunAPoolOfTwoServesTwoRunsAtOnceWithTheResultsOfTwoShards() throws Exception {
    List<TaskProblem> problems = TASK.split(Split.HARNESS);
    List<EpisodeResult> sharded = sandbox.run(new Scripted(), TASK, TWO_CALLS, problems, 2, 7, config(5000),
        l -> { });
    // Each run's model answers only once the other run's has been called too. A run makes one model
    // call at a time (its batch), so two calls in flight come from two runs: a run waiting for the
    // other's sandboxes (a shard per sandbox of the pool, as before) never gets there.
    java.util.concurrent.CountDownLatch both = new java.util.concurrent.CountDownLatch(2);
    Generator meeting = new Generator() {
      final Scripted scripted = new Scripted();

      @Override
      public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
        both.countDown();
        try {
          if (!both.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("the other run never called the model");
          }
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        return scripted.generate(requests, params);
      }
    };
    try (SandboxExecutor own = new SandboxExecutor(SandboxPool.forThisJvm(2, 256), new SandboxHost(), 20,
        3000, SandboxExecutor.COMPILE_TIMEOUT_MILLIS, 1)) {
      var threads = java.util.concurrent.Executors.newFixedThreadPool(2);
      try {
        var a = threads.submit(() -> own.run(meeting, TASK, TWO_CALLS, problems, 2, 7, config(5000), l -> { }));
        var b = threads.submit(() -> own.run(meeting, TASK, TWO_CALLS, problems, 2, 7, config(5000), l -> { }));
        List<EpisodeResult> ra = a.get(90, java.util.concurrent.TimeUnit.SECONDS);
        List<EpisodeResult> rb = b.get(90, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(0, both.getCount(), "both runs called the model at once");
        // one shard or two: the same episodes, in the same order
        assertEquals(sharded.stream().map(EpisodeResult::answer).toList(), ra.stream().map(EpisodeResult::answer).toList());
        assertEquals(sharded.stream().map(EpisodeResult::reward).toList(), rb.stream().map(EpisodeResult::reward).toList());
      } finally {
        threads.shutdownNow();
      }
    }
  }

  @Test
  void sandboxedEpisodesEqualInProcessOnesAndAreBatchedAcrossShards() {
    List<TaskProblem> problems = TASK.split(Split.HARNESS);
    Scripted g1 = new Scripted();
    List<EpisodeResult> in = new InProcessExecutor(new HarnessCompiler()).run(g1, TASK, TWO_CALLS, problems, 3,
        7, config(5000), l -> { });
    Scripted g2 = new Scripted();
    List<EpisodeResult> sb = sandbox.run(g2, TASK, TWO_CALLS, problems, 3, 7, config(5000), l -> { });
    assertEquals(in, sb);
    assertEquals(problems.size() * 3, sb.size());
    assertTrue(sb.stream().allMatch(r -> r.status() == EpisodeStatus.COMPLETED && r.turns() == 2
        && r.toolCalls().size() == 1));
    // every model call went through the worker's batcher; batches join calls across the two shards
    // when both are waiting at once (2 x 18), and under load a late shard may go alone (4 x 9)
    assertEquals(36, g2.batchSizes.stream().mapToInt(Integer::intValue).sum(), "batches " + g2.batchSizes);
    assertTrue(g2.batchSizes.size() <= 4 && g2.batchSizes.stream().allMatch(b -> b <= 18 && b % 9 == 0),
        "batches " + g2.batchSizes);
    assertTrue(sandbox.pool().started() <= 2);
  }

  /** Idle sandboxes stop (their processes exit) and the next run starts fresh ones, same results. */
  @Test
  @Timeout(120)
  void stoppedIdleSandboxesAreStartedAgainOnDemand() throws Exception {
    List<TaskProblem> problems = TASK.split(Split.HARNESS).subList(0, 4);
    try (SandboxExecutor own = new SandboxExecutor(SandboxPool.forThisJvm(2, 256), new SandboxHost(), 20,
        3000)) {
      List<EpisodeResult> before = own.run(new Scripted(), TASK, TWO_CALLS, problems, 2, 7, config(5000),
          l -> { });
      List<Long> pids = own.pool().pids();
      assertTrue(!pids.isEmpty(), "a run leaves its sandboxes idle in the pool");
      assertEquals(pids.size(), own.pool().stopIdle());
      assertEquals(List.of(), own.pool().pids());
      for (long pid : pids) {
        ProcessHandle.of(pid).ifPresent(h -> h.onExit().join());
        assertTrue(ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true), "sandbox " + pid + " exited");
      }
      int started = own.pool().started();
      List<EpisodeResult> after = own.run(new Scripted(), TASK, TWO_CALLS, problems, 2, 7, config(5000),
          l -> { });
      assertEquals(before, after);
      assertTrue(own.pool().started() > started, "fresh sandboxes were started");
    }
  }

  @Test
  void aHarnessThatDoesNotCompileIsABadRequest() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sandbox.run(new Scripted(),
        TASK, "public class X implements whale.harness.Harness { public whale.harness.HarnessResult solve("
            + "whale.task.Problem p, whale.harness.HarnessContext c) { System.exit(1); return null; } }",
        TASK.split(Split.HARNESS), 1, 1, config(5000), l -> { }));
    assertTrue(e.getMessage().contains("System"), e.getMessage());
  }

  static String harness(String name, String body) {
    return "import whale.harness.*;\nimport whale.task.Problem;\nimport java.util.*;\n"
        + "public class " + name + " implements Harness {\n"
        + "  public HarnessResult solve(Problem p, HarnessContext ctx) throws Exception {\n" + body + "\n  }\n}\n";
  }

  @Test
  void harnessCodeSeesAFixedTimeZoneAndLocale() {
    List<EpisodeResult> rs = sandbox.run(new Scripted(), TASK, harness("Where",
        "return HarnessResult.of(TimeZone.getDefault().getID() + \" \" + Locale.getDefault() + \" \""
            + " + String.format(\"%,.1f\", 1234.5));"), TASK.split(Split.HARNESS).subList(0, 2), 1, 1,
        config(5000), l -> { });
    for (EpisodeResult r : rs) {
      assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
      assertEquals("UTC en_US 1,234.5", r.answer());
    }
  }

  @Test
  void theModelsOwnCapsReachTheSandboxedHarness() {
    // a model with a larger window than the built-in one's 64 new tokens, and a smaller prompt cap
    whale.model.ModelLimits limits = new whale.model.ModelLimits(100, 200);
    String source = harness("Caps", """
        String tooLong;
        try { ctx.generate("x".repeat(101), 8); tooLong = "accepted"; }
        catch (IllegalArgumentException e) { tooLong = e.getMessage(); }
        ctx.generate("x".repeat(100), 150);
        ctx.generate("y", 1000);
        return HarnessResult.of(tooLong);""");
    EpisodeRunner.Config config = config(5000).withModelLimits(limits);
    List<TaskProblem> problems = TASK.split(Split.HARNESS).subList(0, 2);
    List<EpisodeResult> sb = sandbox.run(new Scripted(), TASK, source, problems, 1, 1, config, l -> { });
    assertEquals(new InProcessExecutor(new HarnessCompiler()).run(new Scripted(), TASK, source, problems, 1, 1,
        config, l -> { }), sb);
    for (EpisodeResult r : sb) {
      assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
      assertEquals("prompt of 101 chars exceeds the cap of 100", r.answer());
      assertEquals(List.of(150, 200), r.modelCalls().stream().map(c -> c.maxNewTokens()).toList(),
          "asked 150 and 1000 new tokens under a cap of 200");
    }
  }

  /** A task whose one tool counts the calls that reach it. */
  static final class CountingTask implements whale.task.Task {
    final java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();

    public String name() {
      return "counting";
    }

    public List<TaskProblem> split(Split split) {
      return TASK.split(split);
    }

    public double verify(TaskProblem problem, String answer) {
      return 0.0;
    }

    public List<String> pretrainingCorpus(long seed, int documents) {
      return List.of();
    }

    @Override
    public List<whale.task.Tool> tools() {
      return List.of(new whale.task.Tool() {
        public String name() {
          return "echo";
        }

        public String description() {
          return "returns its input's length";
        }

        public String apply(String input) {
          calls.incrementAndGet();
          return String.valueOf(input.length());
        }
      });
    }
  }

  @Test
  void theWorkerRefusesOversizedToolInputWithoutProcessingIt() {
    CountingTask task = new CountingTask();
    try (SandboxHost host = new SandboxHost();
        BatchGroup group = new BatchGroup(new Scripted(), SamplingParams.ROLLOUT, 20, "tools")) {
      SandboxHost.Shard shard = host.open("s1", group, task, 16, whale.model.ModelLimits.BUILTIN.maxPromptChars(),
          whale.model.ModelLimits.BUILTIN.maxNewTokens(), 1.0);
      io.grpc.ManagedChannel ch = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder.forTarget(host.address())
          .usePlaintext().maxInboundMessageSize(SandboxMain.MAX_MESSAGE).build();
      try {
        var stub = whale.proto.sandbox.v1.ToolServiceGrpc.newBlockingStub(ch);
        var big = stub.call(whale.proto.sandbox.v1.ToolCallRequest.newBuilder().setSession("s1").setName("echo")
            .setInput("x".repeat(10 << 20)).build());
        assertEquals("tool 'echo': input of 10485760 characters exceeds the cap of "
            + EpisodeRunner.MAX_TOOL_INPUT_CHARS, big.getError());
        assertEquals(0, task.calls.get());
        var ok = stub.call(whale.proto.sandbox.v1.ToolCallRequest.newBuilder().setSession("s1").setName("echo")
            .setInput("x".repeat(EpisodeRunner.MAX_TOOL_INPUT_CHARS)).build());
        assertEquals(String.valueOf(EpisodeRunner.MAX_TOOL_INPUT_CHARS), ok.getOutput());
        assertEquals(1, task.calls.get());
      } finally {
        ch.shutdownNow();
        host.close(shard);
      }
    }
  }

  /** A = A + A, 27 times: javac folds it into a string of 2^27 copies (it exhausted a worker's heap). */
  static String compileBomb() {
    StringBuilder b = new StringBuilder("import whale.harness.*;\nimport whale.task.Problem;\npublic class Bomb"
        + " implements Harness {\n  static final String A0 = \"0123456789abcdef\";\n");
    for (int i = 1; i <= 27; i++) {
      b.append("  static final String A").append(i).append(" = A").append(i - 1).append(" + A").append(i - 1)
          .append(";\n");
    }
    return b.append("  public HarnessResult solve(Problem p, HarnessContext c) { return HarnessResult.of(A27);"
        + " }\n}\n").toString();
  }

  @Test
  void compilationIsBoundedInMemoryAndTimeOutsideTheWorker() {
    long t0 = System.nanoTime();
    String bomb = sandbox.checkHarness(compileBomb());
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(bomb != null && bomb.contains("the sandbox compiling it died") && bomb.contains("256 MiB heap"),
        bomb);
    assertTrue(bomb.contains("OutOfMemoryError"), bomb);
    System.out.println("compile bomb stopped in " + ms + " ms: " + bomb);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sandbox.run(new Scripted(),
        TASK, compileBomb(), TASK.split(Split.HARNESS), 1, 1, config(5000), l -> { }));
    assertTrue(e.getMessage().startsWith("harness does not compile: compilation stopped"), e.getMessage());
    // honest sources still check in the same pool; a deadline stops a compilation that runs too long
    assertEquals(null, sandbox.checkHarness(TWO_CALLS));
    assertEquals(null, sandbox.checkHarness(harness("Long", "String s = \"" + "w".repeat(30_000)
        + "\"; return HarnessResult.of(s);")));
    try (SandboxHost host = new SandboxHost()) {
      SandboxExecutor strict = new SandboxExecutor(sandbox.pool(), host, 20, 3000, 1);
      String slow = strict.checkHarness(TWO_CALLS.replace("TwoCalls", "TwoCallsAgain"));
      assertEquals("compilation stopped: it ran longer than 1 ms, the limit for compiling a harness", slow);
    }
  }

  /** Answers "ok" after two model calls, except for one problem whose episode exhausts the heap. */
  static String crashOn(String badId) {
    return harness("CrashOne", "if (p.id().equals(\"" + badId + "\")) {\n"
        + "  List<long[]> keep = new ArrayList<>(); while (true) { keep.add(new long[1 << 20]); }\n}\n"
        + "String a = ctx.generate(\"Q: \" + p.question() + \"\\nA:\", 4);\n"
        + "String b = ctx.generate(\"Again: \" + a, 4);\nreturn HarnessResult.of(b.trim());");
  }

  @Test
  void aSandboxCrashScoresOnlyTheEpisodeThatCausedIt() {
    List<TaskProblem> problems = TASK.split(Split.HARNESS);
    String bad = problems.get(1).id();
    String src = crashOn(bad);
    int before = sandbox.pool().started();
    List<EpisodeResult> sb = sandbox.run(new Scripted(), TASK, src, problems, 2, 11, config(5000), l -> { });
    assertEquals(problems.size() * 2, sb.size());
    List<TaskProblem> good = problems.stream().filter(p -> !p.id().equals(bad)).toList();
    // the same episodes with none of them crashing (in this JVM: the crashing one is left out)
    List<EpisodeResult> in = new InProcessExecutor(new HarnessCompiler()).run(new Scripted(), TASK, src, good, 2,
        11, config(5000), l -> { });
    List<EpisodeResult> sbGood = new ArrayList<>();
    for (EpisodeResult r : sb) {
      if (r.problemId().equals(bad)) {
        assertEquals(EpisodeStatus.ERROR, r.status());
        assertEquals(0.0, r.reward());
        assertTrue(r.error().contains("OutOfMemoryError"), r.error());
      } else {
        sbGood.add(r);
      }
    }
    assertEquals(in, sbGood);
    assertTrue(sbGood.stream().allMatch(r -> r.status() == EpisodeStatus.COMPLETED && r.turns() == 2));
    assertTrue(sandbox.pool().started() - before >= 3, "crashed sandboxes replaced, episodes re-run alone");
  }

  @Test
  void anInterruptedRunStopsAtOnceAndKillsTheSandboxesRunningIt() throws Exception {
    String spinning = """
        import whale.harness.*;
        import whale.task.Problem;
        public class Spin implements Harness {
          public HarnessResult solve(Problem p, HarnessContext ctx) {
            long x = 0;
            while (x >= 0) { x++; }
            return HarnessResult.of("" + x);
          }
        }
        """;
    // a pool of its own: the kills and replacements here must not count in the other tests' pool
    try (SandboxExecutor own = new SandboxExecutor(SandboxPool.forThisJvm(2, 256), new SandboxHost(), 20,
        3000)) {
      own.run(new Scripted(), TASK, TWO_CALLS, TASK.split(Split.HARNESS), 1, 7, config(5000), l -> { });
      List<Long> before = own.pool().pids();
      assertEquals(2, before.size(), "both sandboxes started and idle: " + before);
      Thread caller = Thread.currentThread();
      Thread interrupter = new Thread(() -> {
        try {
          Thread.sleep(1500);
        } catch (InterruptedException e) {
          return;
        }
        caller.interrupt(); // what ActivityHeartbeat does when the server refuses a heartbeat
      });
      interrupter.start();
      long t0 = System.nanoTime();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> own.run(new Scripted(), TASK,
          spinning, TASK.split(Split.HARNESS), 1, 1, config(60_000), l -> { }));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      Thread.interrupted();
      assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
      assertTrue(ms < 5_000, "returned " + ms + " ms after start, episodes spin for 60 s");
      // the sandboxes that were spinning are killed, not handed to the next run
      long deadline = System.nanoTime() + 10_000_000_000L;
      List<Long> running = new ArrayList<>(own.pool().pids());
      while (System.nanoTime() < deadline) {
        running = new ArrayList<>(own.pool().pids());
        running.retainAll(before);
        if (running.isEmpty()) {
          break;
        }
        Thread.sleep(100);
      }
      assertEquals(List.of(), running, "sandboxes of the abandoned run still alive");
      // and the pool still serves: replacements start on demand
      assertEquals(3, own.run(new Scripted(), TASK, TWO_CALLS, TASK.split(Split.HARNESS).subList(0, 3), 1, 7,
          config(5000), l -> { }).stream().filter(r -> r.status() == EpisodeStatus.COMPLETED).count());
    }
  }
}
