package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.workflows.ComparisonResult;
import whale.workflows.ComparisonSpec;
import whale.workflows.ComparisonWorkflow;
import whale.workflows.WhaleWorkflow;
import whale.workflows.activities.ComparisonRun;

/** A comparison of two schedules x two seeds at tiny sizes, with the real activities and report. */
class ComparisonTest {
  @TempDir static Path artifacts;
  static ActivityRuntime runtime;

  @RegisterExtension
  static final TestWorkflowExtension temporal = WhaleTestServer.extension();

  @BeforeAll
  static void openRuntime() {
    runtime = ActivityRuntime.open(artifacts);
  }

  @BeforeEach
  void startWorkers(TestWorkflowEnvironment env) {
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
    env.start();
  }

  private static ComparisonWorkflow stub(WorkflowClient client, String id) {
    return client.newWorkflowStub(ComparisonWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
        .setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build());
  }

  @Test
  void runsEveryScheduleAndSeedAndRendersTheReport(WorkflowClient client) throws Exception {
    ComparisonSpec spec = new ComparisonSpec("tiny-compare", TinyRun.spec("cmp"),
        List.of("whale", "weight-only"), List.of(3L, 4L), Map.of());
    ComparisonResult r = stub(client, "compare").run(spec);
    assertEquals(4, r.runs().size());
    for (ComparisonRun run : r.runs()) {
      assertTrue(run.workflowId().startsWith("compare/" + run.schedule() + "/seed-" + run.seed()));
      assertEquals(0L, run.curve().get(0).rollouts(), "the curve starts at the base model");
      assertEquals(run.bestMeanAtK(),
          run.curve().stream().mapToDouble(p -> p.meanAtK()).max().orElseThrow(), 1e-12);
      // workflow time since the base evaluation, for the wall-time plot: 0 first, never backwards
      assertEquals(0L, run.curve().get(0).wallMillis());
      for (int i = 1; i < run.curve().size(); i++) {
        assertTrue(run.curve().get(i).wallMillis() >= run.curve().get(i - 1).wallMillis(),
            run.curve().toString());
      }
    }
    // the same seed pretrains the same base model: every schedule starts from the same base score
    for (long seed : List.of(3L, 4L)) {
      assertEquals(1, r.runs().stream().filter(x -> x.seed() == seed)
          .mapToDouble(ComparisonRun::baseMeanAtK).distinct().count());
    }
    // one row per schedule (bold only where its interval clears the rest)
    assertTrue(r.report().table().lines().anyMatch(l -> l.matches("\\| (\\*\\*)?whale(\\*\\*)? .*")),
        r.report().table());
    assertTrue(r.report().table().contains("weight-only"), r.report().table());
    // whale against weight-only, paired by the two seeds: one sentence either way
    assertTrue(r.report().table().lines().anyMatch(l -> l.startsWith("- whale ")
        && l.contains("weight-only") && l.contains("2 seeds")), r.report().table());
    assertTrue(Files.exists(Path.of(r.report().pngPath()).resolveSibling("plot-wall.png")));
    byte[] png = Files.readAllBytes(Path.of(r.report().pngPath()));
    assertTrue(javax.imageio.ImageIO.read(new java.io.ByteArrayInputStream(png)).getWidth() > 100);
    String html = Files.readString(Path.of(r.report().htmlPath()));
    assertTrue(html.contains("<svg") && html.contains("weight-only"));
    assertTrue(Files.exists(runtime.store().path(r.report().pngRef())));
  }

  @Test
  void anInvalidComparisonFailsNamingEachProblem(WorkflowClient client) {
    ComparisonSpec bad = new ComparisonSpec("bad", TinyRun.spec("cmp"), List.of("whale", "nope"),
        List.of(1L, 1L), Map.of());
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> stub(client, "bad-compare").run(bad));
    ApplicationFailure f = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertTrue(f.getOriginalMessage().contains("'nope'"), f.getOriginalMessage());
    assertTrue(f.getOriginalMessage().contains("seeds: each seed once"), f.getOriginalMessage());
  }
}
