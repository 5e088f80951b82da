package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static whale.workflows.FastRuns.STEP_ROLLOUTS;
import static whale.workflows.FastRuns.SCORE_ROLLOUTS;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.ComparisonRun;
import whale.workflows.activities.CurvePoint;
import whale.workflows.activities.ReportRequest;
import whale.workflows.activities.RetainRequest;
import whale.workflows.schedule.Seeds;

/**
 * A comparison of two schedules over two seeds with fake activities: every cell runs as a child
 * run, the result collects them in order with their curves, the report is rendered from exactly
 * those, and what the cells released is deleted once, by the comparison, at its end.
 */
@Timeout(60)
class ComparisonFastTest extends FastTierTest {
  @RegisterExtension
  static final TestWorkflowExtension temporal = FastRuns.extension();

  private static ComparisonWorkflow stub(WorkflowClient client, String id) {
    return client.newWorkflowStub(ComparisonWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id).build());
  }

  /** Each point of a run's curve as "rollouts mean label". */
  private static List<String> points(ComparisonRun run) {
    return run.curve().stream().map(p -> point(p.rollouts(), p.meanAtK(), p.label())).toList();
  }

  private static String point(long rollouts, double mean, String label) {
    return String.format(Locale.ROOT, "%d %.2f %s", rollouts, mean, label);
  }

  @Test
  void twoSchedulesTimesTwoSeedsRunAsCellsAndTheResultCollectsThem(WorkflowClient client) {
    // budget 1 epoch: whale runs weight (2 steps), harness, weight (2 steps); seed 4 scores 0.02 higher
    ExperimentSpec experiment = FastRuns.spec("whale",
        FastRuns.PHASES.replace("\"weightBudgetEpochs\": 1.5", "\"weightBudgetEpochs\": 1.0"), 0.5, "");
    long seed4 = Seeds.mix(4, SeedStreams.TEST);
    fakes.testMean = (step, harness, seed) -> 0.1 + 0.05 * step + (seed == seed4 ? 0.02 : 0);
    ComparisonSpec spec = new ComparisonSpec("fast-compare", experiment,
        List.of("whale", "weight-only"), List.of(3L, 4L), Map.of());
    ComparisonWorkflow cmp = stub(client, "cmp");
    ComparisonResult r = cmp.run(spec);

    assertEquals("fast-compare", r.name());
    assertEquals(2, r.k());
    assertEquals(List.of("whale 3 cmp/whale/seed-3", "whale 4 cmp/whale/seed-4",
        "weight-only 3 cmp/weight-only/seed-3", "weight-only 4 cmp/weight-only/seed-4"),
        r.runs().stream().map(x -> x.schedule() + " " + x.seed() + " " + x.workflowId()).toList());
    long whaleRollouts = 4L * STEP_ROLLOUTS + 3L * SCORE_ROLLOUTS;
    for (ComparisonRun run : r.runs()) {
      double off = run.seed() == 4 ? 0.02 : 0;
      assertEquals(0.10 + off, run.baseMeanAtK(), 1e-12);
      assertEquals(0.30 + off, run.bestMeanAtK(), 1e-12);
      assertEquals(run.schedule().equals("whale") ? whaleRollouts : 4L * STEP_ROLLOUTS, run.rollouts());
      assertEquals(run.rollouts(), run.rolloutsAtBest(), "the best is the last evaluation");
      assertEquals(run.schedule().equals("whale")
          ? List.of(point(0, 0.1 + off, "base"), point(64, 0.2 + off, "round 1 weight, step 2"),
              point(112, 0.2 + off, "round 1 harness, step 2"),
              point(176, 0.3 + off, "round 2 weight, step 4"))
          : List.of(point(0, 0.1 + off, "base"), point(64, 0.2 + off, "round 1 weight, step 2"),
              point(128, 0.3 + off, "round 1 weight, step 4")), points(run));
      assertEquals(0L, run.curve().get(0).wallMillis());
      List<Long> walls = run.curve().stream().map(CurvePoint::wallMillis).toList();
      for (int i = 1; i < walls.size(); i++) {
        assertTrue(walls.get(i) >= walls.get(i - 1), walls.toString());
      }
      // each cell ran its own schedule on its own seed
      assertEquals(run.schedule().equals("whale") ? 1 : 0,
          fakes.lines(run.workflowId(), "propose").size());
    }

    // the report is rendered once, from exactly the collected runs
    List<ReportRequest> renders = fakes.requests("cmp", ReportRequest.class);
    assertEquals(1, renders.size());
    assertEquals(new ReportRequest("cmp", "fast-compare", 2, r.runs()), renders.get(0));
    assertEquals(new ComparisonReport("4 runs of fast-compare", Fakes.ref("png " + renders.get(0)),
        Fakes.ref("html " + renders.get(0)), "/reports/cmp/plot.png", "/reports/cmp/index.html"),
        r.report());
    assertEquals(r.runs(), cmp.finished());

    // cells of the same seed share their identical RSFT steps (the same requests, the same
    // checkpoints); each cell pins what it holds and leaves what it releases to the comparison,
    // which deletes the union once at its end
    for (long seed : List.of(3L, 4L)) {
      for (int step = 1; step <= 4; step++) {
        assertEquals(fakes.checkpoint("cmp/whale/seed-" + seed, step),
            fakes.checkpoint("cmp/weight-only/seed-" + seed, step));
      }
    }
    assertEquals(List.of("c1"), cellReleases(client, "cmp/whale/seed-3"));
    assertEquals(List.of("c1", "c2"), cellReleases(client, "cmp/weight-only/seed-3"));
    for (String cell : List.of("cmp/whale/seed-3", "cmp/whale/seed-4", "cmp/weight-only/seed-3",
        "cmp/weight-only/seed-4")) {
      assertTrue(fakes.requests(cell, RetainRequest.class).stream()
          .allMatch(q -> q.run().equals(cell) && q.released().isEmpty()), cell);
    }
    List<RetainRequest> own = fakes.calls("cmp").stream()
        .filter(c -> c.workflowId().equals("cmp") && c.request() instanceof RetainRequest)
        .map(c -> (RetainRequest) c.request()).toList();
    List<String> released = new ArrayList<>();
    for (long seed : List.of(3L, 4L)) {
      released.add(fakes.checkpoint("cmp/weight-only/seed-" + seed, 1));
      released.add(fakes.checkpoint("cmp/weight-only/seed-" + seed, 2));
    }
    assertEquals(List.of(new RetainRequest("cmp", List.of(), List.copyOf(new TreeSet<>(released)))), own);
  }

  private List<String> cellReleases(WorkflowClient client, String cell) {
    return client.newUntypedWorkflowStub(cell).getResult(WhaleResult.class).deferredReleases().stream()
        .map(fakes::name).sorted().toList();
  }

  @Test
  void anInvalidComparisonFailsNamingEachProblemBeforeAnyCellRuns(WorkflowClient client) {
    ComparisonSpec bad = new ComparisonSpec("bad", FastRuns.spec("whale"), List.of("whale", "nope"),
        List.of(1L, 1L), Map.of());
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> stub(client, "bad-cmp").run(bad));
    ApplicationFailure f = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals("InvalidSpec", f.getType());
    assertTrue(f.getOriginalMessage().contains("schedules: 'nope' is not one of"), f.getOriginalMessage());
    assertTrue(f.getOriginalMessage().contains("seeds: each seed once, got [1, 1]"), f.getOriginalMessage());
    assertEquals(List.of(), fakes.calls("bad-cmp"));
  }
}
