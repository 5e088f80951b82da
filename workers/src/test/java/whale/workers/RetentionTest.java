package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.store.Pins;
import whale.workflows.ComparisonResult;
import whale.workflows.ComparisonSpec;
import whale.workflows.ComparisonWorkflow;
import whale.workflows.ExperimentSpec;
import whale.workflows.RunEvent;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * Checkpoint retention end to end: real tiny runs (4 RSFT steps in two weight phases of 2, a test
 * evaluation after every second step and at every phase end) against the test server, the store
 * listed afterwards. Each test has a fresh store; runs within a test share it.
 */
class RetentionTest {
  @TempDir Path artifacts;
  ActivityRuntime runtime;

  @RegisterExtension
  static final TestWorkflowExtension temporal = WhaleTestServer.extension();

  @BeforeEach
  void startWorkers(TestWorkflowEnvironment env) {
    runtime = ActivityRuntime.open(artifacts);
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
    env.start();
  }

  /**
   * {@link TinyRun}'s shape with a base pretrained long enough that every RSFT step accepts some
   * rollouts: each of the 4 steps writes a new checkpoint (TinyRun's base trains on step 1 only).
   */
  static ExperimentSpec spec(String checkpoints) {
    return SpecJson.parse("""
        {
          "name": "retention",
          "seed": 7,
          "data": { "weightProblems": 32, "harnessProblems": 16, "testProblems": 12 },
          "model": { "dModel": 32, "layers": 1, "heads": 2, "pretrainSteps": %s,
                     "pretrainBatch": 32, "pretrainDocuments": 2000 },
          "rsft": { "promptsPerStep": 8, "samplesPerPrompt": %s, "minibatch": 32 },
          "phases": { "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2,
                      "weightBudgetEpochs": 1.0 },
          "harness": { "candidatesPerIteration": 2 },
          "eval": { "k": 2, "everyEpochs": 0.5 }%s
        }
        """.formatted(System.getProperty("rt.pre", "300"), System.getProperty("rt.n", "8"), checkpoints));
  }

  private static ExperimentSpec spec(int keepLast) {
    return spec(", \"checkpoints\": { \"keepLast\": " + keepLast + " }");
  }

  private static WhaleResult run(WorkflowClient client, String id, ExperimentSpec spec) {
    return client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
        .setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build()).run(spec, null);
  }

  private static List<String> stepCheckpoints(WorkflowClient client, String id) {
    return client.newWorkflowStub(WhaleWorkflow.class, id).history().stream()
        .filter(e -> e.kind().equals("rsft-step")).map(RunEvent::checkpointRef).toList();
  }

  /** Every builtin model checkpoint in the store, by its magic (other objects are rollouts, harnesses, ...). */
  static Set<String> storedCheckpoints(Path root) throws IOException {
    Set<String> out = new TreeSet<>();
    try (Stream<Path> s = Files.walk(root.resolve("objects"))) {
      for (Path p : s.filter(Files::isRegularFile).toList()) {
        try (InputStream in = Files.newInputStream(p)) {
          if (Arrays.equals(in.readNBytes(8), "WHALEGPT".getBytes(StandardCharsets.US_ASCII))) {
            out.add("sha256:" + p.getParent().getFileName() + p.getFileName());
          }
        }
      }
    }
    return out;
  }

  static long bytes(Path root, Set<String> refs) throws IOException {
    long n = 0;
    for (String r : refs) {
      n += Files.size(root.resolve("objects").resolve(r.substring(7, 9)).resolve(r.substring(9)));
    }
    return n;
  }

  /** What a run must keep: its base, both phase ends (steps 2 and 4), the best evaluated one. */
  private static Set<String> expectedKept(WhaleResult r, List<String> steps) {
    RunEvent best = r.evaluations().stream()
        .reduce((a, b) -> b.meanAt8() > a.meanAt8() ? b : a).orElseThrow();
    return new TreeSet<>(List.of(r.evaluations().get(0).checkpointRef(), steps.get(1),
        steps.get(3), best.checkpointRef()));
  }

  @Test
  void keepLastOneLeavesExactlyTheBasePhaseEndsAndBestAndARerunRecomputesWhatWasDeleted(
      WorkflowClient client) throws Exception {
    WhaleResult r = run(client, "keep-one", spec(1));
    List<String> steps = stepCheckpoints(client, "keep-one");
    assertEquals(4, new TreeSet<>(steps).size(), "every step trained: " + steps);
    Set<String> kept = expectedKept(r, steps);
    Set<String> stored = storedCheckpoints(artifacts);
    System.out.printf("keepLast 1: %d step checkpoints written (%d distinct), %d kept, %d bytes%n",
        steps.size(), new TreeSet<>(steps).size(), stored.size(), bytes(artifacts, stored));
    assertEquals(kept, stored, "exactly base, phase ends and best; steps " + steps);
    Set<String> deleted = new TreeSet<>(steps);
    deleted.removeAll(kept);
    assertFalse(deleted.isEmpty(), "steps 1 and 3 are neither phase ends nor best: " + steps);
    for (String d : deleted) {
      assertFalse(runtime.store().intact(d), d + " was released and is deleted");
    }
    assertEquals(kept, new TreeSet<>(new Pins(runtime.store()).held("keep-one")),
        "the finished run's pin names what it keeps");
    // each step's checkpoint was held for its phase child until the run's pin took it over
    assertEquals(List.of(), new Pins(runtime.store()).held("keep-one/r1-weight"));
    assertEquals(List.of(), new Pins(runtime.store()).held("keep-one/r2-weight"));
    assertTrue(kept.contains(r.checkpointRef()), "the final checkpoint is kept");

    // the same run again on the same store: the memos of steps 1 and 3 name deleted checkpoints,
    // so those steps are recomputed (not handed back dangling), to the same bytes
    WhaleResult again = run(client, "keep-one-again", spec(1));
    assertEquals(steps, stepCheckpoints(client, "keep-one-again"));
    assertEquals(r.checkpointRef(), again.checkpointRef());
    assertEquals(kept, storedCheckpoints(artifacts));

    Histories.replayAndKeep(client, "keep-one", "retention");
  }

  /**
   * A comparison's cells share identical work through the memo (same seed: the base, and whale's
   * and weight-only's first weight phase under h0), so a cell must not delete a checkpoint a
   * sibling will still ask for: cells leave what they release to the comparison, which deletes it
   * at the end. Each distinct RSFT step and test evaluation is computed exactly once, and the store
   * ends holding exactly what the cells' pins name.
   */
  @Test
  void aComparisonsCellsShareTheirIdenticalStepsAndDeleteOnlyAtTheEnd(WorkflowClient client)
      throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Metrics.addRegistry(meters);
    try {
      ComparisonSpec spec = new ComparisonSpec("sharing", spec(1), List.of("whale", "weight-only"),
          List.of(7L), Map.of());
      ComparisonResult r = client.newWorkflowStub(ComparisonWorkflow.class,
          WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE)
              .setWorkflowId("share").setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build())
          .run(spec);
      int requested = 0;
      Set<String> stepCheckpoints = new TreeSet<>();
      Set<String> deferred = new TreeSet<>();
      Set<String> pinned = new TreeSet<>();
      for (String cell : List.of("share/whale/seed-7", "share/weight-only/seed-7")) {
        List<String> steps = stepCheckpoints(client, cell);
        requested += steps.size();
        stepCheckpoints.addAll(steps);
        WhaleResult w = client.newUntypedWorkflowStub(cell).getResult(WhaleResult.class);
        deferred.addAll(w.deferredReleases());
        pinned.addAll(new Pins(runtime.store()).held(cell));
      }
      double computed = meters.find("whale_rsft_steps").counters().stream()
          .mapToDouble(c -> c.count()).sum();
      long memoized;
      try (Stream<Path> m = Files.list(artifacts.resolve("memo/rsft-step"))) {
        memoized = m.count();
      }
      System.out.printf("comparison of 2 cells, one seed: %d RSFT steps requested, %.0f computed,"
          + " %d distinct requests; %d checkpoints released and deleted at the end%n", requested,
          computed, memoized, deferred.size());
      assertEquals(8, requested, "4 steps per cell");
      assertEquals(memoized, (long) computed, "each distinct step computed once, none again");
      assertTrue(computed <= 6, "at least the first weight phase's 2 steps are shared: " + computed);
      assertFalse(deferred.isEmpty(), "keepLast 1 releases steps");
      // released by the cells, deleted by the comparison unless a cell still pins it
      assertEquals(pinned, storedCheckpoints(artifacts));
      for (String d : deferred) {
        assertEquals(pinned.contains(d), runtime.store().intact(d), d);
      }
      assertEquals(2, r.runs().size());
      Histories.replayAndKeep(client, "share", "comparison");
    } finally {
      Metrics.removeRegistry(meters);
    }
  }

  @Test
  void aRunSharingTheStoreKeepsTheCheckpointsItPinsWhenAnotherReleasesThem(WorkflowClient client)
      throws Exception {
    // run "all" keeps every step (as whale did before retention), run "one" the fewest
    WhaleResult all = run(client, "keep-all", spec(1000));
    List<String> steps = stepCheckpoints(client, "keep-all");
    assertEquals(4, new TreeSet<>(steps).size(), "every step trained: " + steps);
    Set<String> everything = new TreeSet<>(steps);
    everything.add(all.evaluations().get(0).checkpointRef());
    Set<String> stored = storedCheckpoints(artifacts);
    assertEquals(everything, stored);
    System.out.printf("keep every step: %d checkpoints, %d bytes%n", stored.size(),
        bytes(artifacts, stored));

    // identical bytes: "one" releases steps 1 and 3, but "all" pins them
    run(client, "keep-one", spec(1));
    assertEquals(steps, stepCheckpoints(client, "keep-one"));
    assertEquals(everything, storedCheckpoints(artifacts), "nothing that keep-all pins is deleted");
    assertTrue(new Pins(runtime.store()).held("keep-one").size() < everything.size());
  }

  @Test
  void theDefaultKeepsTheLastTwoSteps(WorkflowClient client) throws Exception {
    WhaleResult r = run(client, "default", spec(""));
    List<String> steps = stepCheckpoints(client, "default");
    assertEquals(4, new TreeSet<>(steps).size(), "every step trained: " + steps);
    Set<String> kept = expectedKept(r, steps);
    kept.add(steps.get(2)); // step 3: one of the last two
    Set<String> stored = storedCheckpoints(artifacts);
    System.out.printf("keepLast 2 (default): %d step checkpoints, %d kept, %d bytes%n",
        steps.size(), stored.size(), bytes(artifacts, stored));
    assertEquals(kept, stored, "steps " + steps);
  }
}
