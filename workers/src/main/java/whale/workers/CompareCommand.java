package whale.workers;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import whale.activities.ActivityRuntime;
import whale.model.LanguageModel;
import whale.workflows.ComparisonResult;
import whale.workflows.ComparisonSpec;
import whale.workflows.ComparisonWorkflow;
import whale.workflows.SpecJson;
import whale.workflows.WhaleWorkflow;
import whale.workflows.activities.ComparisonRun;

/**
 * Runs a comparison (schedules x seeds) in this process, like {@code demo}: a Temporal service, all
 * workers, and a {@link ComparisonWorkflow}; prints each run as it finishes, then the results table
 * and where the plot and the HTML report lie.
 */
@Command(name = "compare", mixinStandardHelpOptions = true,
    description = "Run an experiment under several schedules and seeds and report them side by side.")
public class CompareCommand implements Callable<Integer> {
  @Parameters(index = "0", description = "Comparison spec (JSON), e.g. examples/math-compare.json")
  Path specFile;

  @Mixin Artifacts artifacts = new Artifacts();

  @Option(names = "--test-server", description = "Use the in-process Java test server even if a "
      + "temporal binary is on the PATH.")
  boolean forceTestServer;

  @Option(names = "--server", description = "Run on the Temporal server of the connection options "
      + "(workers must be running: whale worker) instead of in this process; the run outlives this "
      + "command, and `whale report <id>` regenerates its report.")
  boolean onServer;

  @Mixin Connection connection;

  @Override
  public Integer call() throws Exception {
    long t0 = System.nanoTime();
    ComparisonSpec spec = SpecJson.parseComparison(Files.readString(specFile));
    DataFiles.check(spec.experiment(), !onServer);
    String id = "whale-compare-" + spec.name().replaceAll("[^A-Za-z0-9._-]", "_") + "-"
        + System.currentTimeMillis();
    if (onServer) {
      var service = connection.service();
      try {
        return follow(connection.client(service), id, spec, t0, "the workers' artifact store");
      } finally {
        service.shutdown();
      }
    }
    ActivityRuntime runtime = ActivityRuntime.open(artifacts.open());
    System.out.println(whale.model.EngineSettings.startEngine());
    Optional<Path> temporal = forceTestServer ? Optional.empty() : DemoCommand.findOnPath("temporal");
    try (TestWorkflowEnvironment env = DemoCommand.environment(temporal)) {
      WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
      env.start();
      int rc = follow(env.getWorkflowClient(), id, spec, t0, runtime.store().describe());
      System.out.println(sharedWork(whale.activities.WhaleMetrics.memoCounts()));
      return rc;
    }
  }

  /**
   * What the cells shared through the activity memo in this process, per kind: "rsft-step 120
   * requested, 64 computed" (the rest remembered, or joined while an identical request computed).
   */
  static String sharedWork(java.util.Map<String, Long> counts) {
    java.util.Map<String, long[]> byKind = new java.util.TreeMap<>();
    counts.forEach((k, n) -> {
      String[] kindOutcome = k.split(" ", 2);
      long[] c = byKind.computeIfAbsent(kindOutcome[0], x -> new long[2]);
      c[0] += n;
      if (kindOutcome[1].equals("computed")) {
        c[1] += n;
      }
    });
    StringBuilder out = new StringBuilder("shared work (activity memo, this process):");
    byKind.forEach((kind, c) -> out.append(String.format(Locale.ROOT, " %s %d requested, %d computed;",
        kind, c[0], c[1])));
    return byKind.isEmpty() ? out + " none" : out.substring(0, out.length() - 1);
  }

  private static int follow(WorkflowClient client, String id, ComparisonSpec spec, long t0,
      String artifacts) throws Exception {
    {
      ComparisonWorkflow wf = client.newWorkflowStub(ComparisonWorkflow.class,
          WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id).build());
      System.out.printf(Locale.ROOT, "started %s: %d schedules x %d seeds; artifacts at %s%n", id,
          spec.schedules().size(), spec.seeds().size(), artifacts);
      CompletableFuture<ComparisonResult> done = WorkflowClient.execute(wf::run, spec);
      ComparisonWorkflow q = client.newWorkflowStub(ComparisonWorkflow.class, id);
      int printed = 0;
      while (!done.isDone()) {
        try {
          done.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          // still running
        }
        try {
          List<ComparisonRun> runs = q.finished();
          for (; printed < runs.size(); printed++) {
            ComparisonRun r = runs.get(printed);
            System.out.printf(Locale.ROOT, "[%5.0f s] %-14s seed %-3d base %.3f -> best %.3f after "
                    + "%d rollouts (%d in all)%n", (System.nanoTime() - t0) / 1e9, r.schedule(),
                r.seed(), r.baseMeanAtK(), r.bestMeanAtK(), r.rolloutsAtBest(), r.rollouts());
          }
        } catch (RuntimeException e) {
          // a closing run may stop answering queries; the result says all
        }
      }
      ComparisonResult result = done.get();
      System.out.println();
      System.out.println(Report.comparison(result));
      System.out.printf(Locale.ROOT, "wall time %.1f s%n", (System.nanoTime() - t0) / 1e9);
      return 0;
    }
  }
}
