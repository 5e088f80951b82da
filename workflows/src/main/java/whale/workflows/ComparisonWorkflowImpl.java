package whale.workflows;

import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.ChildWorkflowOptions;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.ComparisonRun;
import whale.workflows.activities.CurvePoint;
import whale.workflows.activities.ReportRequest;
import whale.workflows.activities.RetainRequest;

/** See {@link ComparisonWorkflow}. */
public class ComparisonWorkflowImpl implements ComparisonWorkflow {
  private final List<ComparisonRun> finished = new ArrayList<>();

  @Override
  public ComparisonResult run(ComparisonSpec spec) {
    List<String> problems = spec.problems();
    if (!problems.isEmpty()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "invalid comparison spec: " + String.join("; ", problems), "InvalidSpec");
    }
    String id = Workflow.getInfo().getWorkflowId();
    List<Promise<WhaleResult>> results = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (String schedule : spec.schedules()) {
      for (long seed : spec.seeds()) {
        String childId = id + "/" + schedule + "/seed-" + seed;
        WhaleWorkflow child = Workflow.newChildWorkflowStub(WhaleWorkflow.class,
            ChildWorkflowOptions.newBuilder()
                .setWorkflowId(childId)
                .setTaskQueue(WhaleWorkflow.TASK_QUEUE)
                .setStaticSummary(schedule + ", seed " + seed)
                .build());
        ExperimentSpec cell = spec.experiment().withScheduleAndSeed(schedule, seed);
        results.add(Async.function(child::run, cell, (WhaleState) null));
        ids.add(childId);
      }
    }
    for (int i = 0; i < results.size(); i++) {
      WhaleResult r = results.get(i).get();
      long seed = spec.seeds().get(i % spec.seeds().size());
      finished.add(run(r, seed, ids.get(i)));
      Workflow.setCurrentDetails(progress(spec, results.size()));
    }
    // The cells left what they released for this point: a sibling may have found any of them
    // through the memo until now. Deleted unless some run still pins it (versioned: comparisons
    // recorded before it had their cells delete at once).
    if (Workflow.getVersion("deferred-release", Workflow.DEFAULT_VERSION, 1) >= 1) {
      TreeSet<String> deferred = new TreeSet<>();
      for (int i = 0; i < results.size(); i++) {
        List<String> d = results.get(i).get().deferredReleases();
        if (d != null) {
          deferred.addAll(d);
        }
      }
      if (!deferred.isEmpty()) {
        WorkflowStubs.weight("checkpoint retention: release " + deferred.size()
            + " after the comparison").retainCheckpoints(new RetainRequest(id, List.of(),
            List.copyOf(deferred)));
      }
    }
    int k = spec.experiment().eval().k();
    ComparisonReport report = WorkflowStubs.report("render the comparison report")
        .render(new ReportRequest(id.replaceAll("[^A-Za-z0-9._-]", "_"), spec.name(), k, List.copyOf(finished)));
    Workflow.setCurrentDetails(report.table() + "\n\nplot: `" + report.pngPath() + "`  \npage: `"
        + report.htmlPath() + "`  \n(artifact store: " + report.pngRef() + ", " + report.htmlRef() + ")");
    return new ComparisonResult(spec.name(), k, List.copyOf(finished), report);
  }

  /** A run as the report needs it: its best, when it got there, and its learning curve. */
  static ComparisonRun run(WhaleResult r, long seed, String workflowId) {
    List<CurvePoint> curve = new ArrayList<>();
    Long t0 = r.evaluations().isEmpty() ? null : r.evaluations().get(0).atMillis();
    for (RunEvent e : r.evaluations()) {
      Long wall = t0 == null || e.atMillis() == null ? null : e.atMillis() - t0;
      curve.add(new CurvePoint(e.rollouts(), e.meanAt8(), e.round() == 0 ? "base"
          : String.format(Locale.ROOT, "round %d %s, step %d", e.round(), e.phase(), e.step()),
          wall));
    }
    return new ComparisonRun(r.schedule(), seed, workflowId, r.baseMeanAt8(), r.bestMeanAt8(),
        r.rolloutsAtBest(), r.rollouts(), curve);
  }

  private String progress(ComparisonSpec spec, int total) {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "**%s** · %d of %d runs finished%n%n| schedule | seed | base | best | rollouts at best |%n"
            + "|---|---|---|---|---|%n", spec.name(), finished.size(), total));
    for (ComparisonRun r : finished) {
      b.append(String.format(Locale.ROOT, "| %s | %d | %.3f | %.3f | %d |%n", r.schedule(), r.seed(),
          r.baseMeanAtK(), r.bestMeanAtK(), r.rolloutsAtBest()));
    }
    return b.toString();
  }

  @Override
  public List<ComparisonRun> finished() {
    return List.copyOf(finished);
  }
}
