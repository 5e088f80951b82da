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
import whale.task.MathTask;
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

  @Test
  void aHarnessThatDoesNotCompileIsABadRequest() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> sandbox.run(new Scripted(),
        TASK, "public class X implements whale.harness.Harness { public whale.harness.HarnessResult solve("
            + "whale.task.Problem p, whale.harness.HarnessContext c) { System.exit(1); return null; } }",
        TASK.split(Split.HARNESS), 1, 1, config(5000), l -> { }));
    assertTrue(e.getMessage().contains("System"), e.getMessage());
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
