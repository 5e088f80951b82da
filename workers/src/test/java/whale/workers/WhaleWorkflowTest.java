package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.SearchAttributeKey;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.workflows.ExperimentSpec;
import whale.workflows.RunEvent;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleStatus;
import whale.workflows.WhaleWorkflow;

/**
 * The workflow against the Java test server with the real activities (real DJL training, real
 * harness compilation and episodes) at tiny sizes, on the four task queues.
 */
class WhaleWorkflowTest {
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

  private static WorkflowOptions options(String id) {
    return WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
        .setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build();
  }

  @Test
  void fullRunFollowsTheFixedScheduleAndAccountsEveryRollout(TestWorkflowEnvironment env,
      WorkflowClient client) throws Exception {
    ExperimentSpec spec = TinyRun.spec("full");
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("full-run"));
    WhaleResult r = wf.run(spec, null);

    // 4 steps per epoch, 2 per phase, budget 1 epoch: two rounds, no harness phase after the budget
    assertEquals(2, r.rounds());
    assertEquals(4, r.steps());
    assertFalse(r.stopped());
    List<String> evals = r.evaluations().stream().map(e -> e.round() + " " + e.phase()).toList();
    assertEquals(List.of("0 base", "1 weight", "1 harness", "2 weight"), evals);

    List<RunEvent> history = wf.history();
    List<RunEvent> steps = history.stream().filter(e -> e.kind().equals("rsft-step")).toList();
    assertEquals(4, steps.size());
    assertEquals(List.of(1, 2, 3, 4), steps.stream().map(RunEvent::step).toList());
    // rollout accounting: weight step = prompts x n; harness iteration 1 = |D_harness| (re-score);
    // each later iteration = valid candidates x |D_harness|; test evaluation counted apart
    long candidatesScored = history.stream()
        .filter(e -> e.kind().equals("candidate") && e.success() != null && e.iteration() > 1)
        .count();
    long expected = 4L * TinyRun.PROMPTS * TinyRun.SAMPLES
        + TinyRun.HARNESS_PROBLEMS + candidatesScored * TinyRun.HARNESS_PROBLEMS;
    assertEquals(expected, r.rollouts());
    assertEquals(4L * 12 * 2, r.testRollouts());
    assertEquals(1, history.stream().filter(e -> e.kind().equals("accept")).count());

    // every checkpoint the run keeps (keepLast 2: steps 2 to 4; step 1 is neither a phase end
    // nor the best, see RetentionTest) and its harness are in the artifact store
    for (RunEvent e : steps.subList(1, 4)) {
      assertTrue(Files.exists(runtime.store().path(e.checkpointRef())));
    }
    assertTrue(runtime.store().getString(r.harnessRef()).contains("implements Harness"));
    double best = r.evaluations().stream().mapToDouble(RunEvent::meanAt8).max().orElseThrow();
    assertEquals(best, r.bestMeanAt8());

    // search attributes and current details as the Web UI shows them
    var describe = env.getWorkflowClient().getWorkflowServiceStubs().blockingStub()
        .describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
            .setNamespace(env.getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId("full-run"))
            .build());
    Map<String, String> attrs = describe.getWorkflowExecutionInfo().getSearchAttributes()
        .getIndexedFieldsMap().entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().getData().toStringUtf8()));
    assertEquals("\"done\"", attrs.get("WhalePhase"));
    assertEquals("2", attrs.get("WhaleRound"));
    assertEquals(Long.toString(r.rollouts()), attrs.get("WhaleRollouts"));
    assertEquals(best, Double.parseDouble(attrs.get("WhaleBestMeanAt8")), 1e-12);

    // the phases ran as child workflows; every history replays against the current code
    Histories.replayAndKeep(client, "full-run", "whale");
  }

  @Test
  void forcePhaseSwitchEndsTheWeightPhaseAfterOneStep(WorkflowClient client) {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("force-switch"));
    // signal-with-start: the signal is in history before the first step, so the test is exact
    stub.signalWithStart("forcePhaseSwitch", new Object[] {},
        new Object[] {TinyRun.spec("switch")});
    WhaleResult r = stub.getResult(WhaleResult.class);
    List<RunEvent> history = client.newWorkflowStub(WhaleWorkflow.class, "force-switch").history();
    Map<Integer, Long> stepsPerRound = history.stream()
        .filter(e -> e.kind().equals("rsft-step"))
        .collect(Collectors.groupingBy(RunEvent::round, Collectors.counting()));
    // round 1 cut to one step; the budget (4 steps) is still spent in full: 1 + 2 + 1
    assertEquals(Map.of(1, 1L, 2, 2L, 3, 1L), stepsPerRound);
    assertEquals(4, r.steps());
    assertEquals(3, r.rounds());
  }

  @Test
  void pauseHoldsTheRunAtAStepBoundaryAndResumeContinuesIt(WorkflowClient client)
      throws Exception {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("pause"));
    stub.signalWithStart("pause", new Object[] {}, new Object[] {TinyRun.spec("pause")});
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "pause");
    // held after the base evaluation, before the first weight phase
    WhaleStatus held = waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));
    assertEquals(0, held.step());
    assertEquals(null, held.phaseWorkflowId());
    Thread.sleep(2000);
    WhaleStatus still = wf.status();
    assertEquals(0, still.step(), "no RSFT step may run while paused");
    assertEquals(held.rollouts(), still.rollouts());
    wf.resume();
    WhaleResult r = stub.getResult(WhaleResult.class);
    assertEquals(4, r.steps());
    assertFalse(r.stopped());
  }

  @Test
  void stopFinishesTheCurrentStepEvaluatesAndReturns(WorkflowClient client) throws Exception {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("stop"));
    stub.signalWithStart("pause", new Object[] {}, new Object[] {TinyRun.spec("stop")});
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "stop");
    waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));
    wf.resume();
    waitFor(wf, s -> s.step() >= 1);
    wf.stop();
    WhaleResult r = stub.getResult(WhaleResult.class);
    assertTrue(r.stopped());
    assertTrue(r.steps() >= 1 && r.steps() < 4, "stopped after " + r.steps() + " steps");
    RunEvent last = r.evaluations().get(r.evaluations().size() - 1);
    assertEquals(r.steps(), last.step(), "the run evaluates after its last step");
    assertEquals(1, r.rounds());
    long steps = wf.history().stream().filter(e -> e.kind().equals("rsft-step")).count();
    assertEquals(r.steps(), steps);
  }

  @Test
  void anInvalidSpecFailsTheRunBeforeAnythingRunsAndNamesTheField(WorkflowClient client) {
    ExperimentSpec good = TinyRun.spec("invalid");
    ExperimentSpec bad = new ExperimentSpec(good.name(), good.task(), good.seed(), good.schedule(),
        good.data(), good.model(),
        new ExperimentSpec.RsftSpec(8, 8, 1.0, 20, 0.5, 32, -1.0, null, null, null),
        good.phases(), good.harness(), good.eval(), null, null, null, Map.of());
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("invalid"));
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> wf.run(bad, null));
    ApplicationFailure cause = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals("InvalidSpec", cause.getType());
    assertTrue(cause.getOriginalMessage().contains("rsft.learningRate"), cause.getOriginalMessage());
    assertTrue(client.fetchHistory("invalid").getEvents().stream()
        .noneMatch(ev -> ev.hasActivityTaskScheduledEventAttributes()), "no activity may run");
  }

  @Test
  void aRunWithTheCommandProposerUsesTheCandidatesAnExternalProgramWrites(WorkflowClient client)
      throws Exception {
    // A stand-in for a coding agent: it reads the archive it is given and writes M candidates.
    Path agent = artifacts.resolve("agent.sh");
    Files.writeString(agent, """
        #!/usr/bin/env bash
        set -euo pipefail
        test -f "$WHALE_ARCHIVE/summary.json"
        src=$(ls "$WHALE_ARCHIVE"/*/source.java | head -1)
        for i in $(seq 1 "$WHALE_CANDIDATES"); do
          name="Agent${WHALE_ITERATION}x$i"
          sed -E "s/public final class [A-Za-z0-9_]+/public final class $name/" "$src" \
            > "$WHALE_CANDIDATES_DIR/$name.java"
          printf '{"name":"%s","hypothesis":"h%s","changes":"renamed","axis":"none"}' \
            "$name" "$i" > "$WHALE_CANDIDATES_DIR/$name.json"
        done
        """);
    ExperimentSpec tiny = TinyRun.spec("command");
    ExperimentSpec spec = whale.workflows.SpecJson.parse(whale.workflows.SpecJson.write(tiny)
        .replace("\"proposer\" : \"template\"", "\"proposer\" : \"command\"")
        .replace("\"command\" : [ ]", "\"command\" : [\"bash\", \"" + agent + "\"]"));
    assertEquals("command", spec.harness().proposer());
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("command-proposer"));
    WhaleResult r = wf.run(spec, null);
    assertEquals(4, r.steps());
    List<RunEvent> candidates = wf.history().stream()
        .filter(e -> e.kind().equals("candidate") && e.iteration() == 2).toList();
    assertEquals(List.of("Agent2x1", "Agent2x2"), candidates.stream().map(RunEvent::note).toList());
    assertTrue(candidates.stream().allMatch(e -> e.success() != null), "both compiled and were scored");
    try (var dirs = Files.walk(runtime.store().root().resolve("named/archives"))) {
      assertTrue(dirs.anyMatch(p -> p.toString().contains("command-proposer")
          && p.getFileName().toString().equals("summary.json")));
    }
  }

  private static WhaleStatus waitFor(WhaleWorkflow wf, Predicate<WhaleStatus> p)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (System.nanoTime() < deadline) {
      WhaleStatus s = wf.status();
      if (p.test(s)) {
        return s;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("condition not reached; status " + wf.status());
  }
}
