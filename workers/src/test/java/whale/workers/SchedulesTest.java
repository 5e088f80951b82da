package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.temporal.api.enums.v1.EventType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowUpdateException;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
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
import whale.workflows.Adjustment;
import whale.workflows.ExperimentSpec;
import whale.workflows.Payloads;
import whale.workflows.RunEvent;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleStatus;
import whale.workflows.WhaleWorkflow;

/**
 * Every schedule at tiny sizes on the test server with the real activities; continue-as-new in the
 * middle of phases; the updates and their validators. Each run's histories (parent and phase
 * children) are replayed against the current code and kept for the replay test.
 */
class SchedulesTest {
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

  private static WhaleResult run(WorkflowClient client, String id, ExperimentSpec spec) {
    return client.newWorkflowStub(WhaleWorkflow.class, options(id)).run(spec, null);
  }

  private static List<RunEvent> events(WorkflowClient client, String id, String kind) {
    return client.newWorkflowStub(WhaleWorkflow.class, id).history().stream()
        .filter(e -> e.kind().equals(kind)).toList();
  }

  private static long harnessRollouts(List<RunEvent> candidates) {
    // iteration 1 re-scores the incoming harness; each valid candidate is scored on D_harness once
    return candidates.stream().filter(e -> e.success() != null).count() * TinyRun.HARNESS_PROBLEMS;
  }

  @Test
  void weightOnlySpendsTheWholeBudgetInOnePhaseWithH0(WorkflowClient client) throws Exception {
    WhaleResult r = run(client, "weight-only", TinyRun.spec("wo", "weight-only", ""));
    assertEquals(4, r.steps());
    assertEquals(1, r.rounds());
    assertTrue(events(client, "weight-only", "candidate").isEmpty(), "no harness search");
    assertEquals(4L * TinyRun.PROMPTS * TinyRun.SAMPLES, r.rollouts());
    assertTrue(r.harnessName().startsWith("h0"), r.harnessName());
    // test every 0.5 epoch = 2 steps: base, step 2, step 4 (the phase end is step 4 already)
    assertEquals(List.of(0, 2, 4), r.evaluations().stream().map(RunEvent::step).toList());
    Histories.replayAndKeep(client, "weight-only", "weight-only");
  }

  @Test
  void harnessOnlyRunsTheHarnessPhasesOfWhaleWithTheBaseWeights(WorkflowClient client)
      throws Exception {
    WhaleResult r = run(client, "harness-only", TinyRun.spec("ho", "harness-only", ""));
    assertEquals(0, r.steps());
    assertTrue(events(client, "harness-only", "rsft-step").isEmpty());
    // whale at these sizes runs one harness phase (round 1; none after the budget ends in round 2)
    List<RunEvent> accepts = events(client, "harness-only", "accept");
    assertEquals(1, accepts.size());
    List<RunEvent> candidates = events(client, "harness-only", "candidate");
    assertEquals(2, candidates.stream().mapToInt(RunEvent::iteration).max().orElseThrow());
    assertEquals(harnessRollouts(candidates), r.rollouts());
    String base = r.evaluations().get(0).checkpointRef();
    assertTrue(r.evaluations().stream().allMatch(e -> e.checkpointRef().equals(base)),
        "the weights never change");
    Histories.replayAndKeep(client, "harness-only", "harness-only");
  }

  @Test
  void stagewiseRunsAllWeightStepsThenAllHarnessIterations(WorkflowClient client) throws Exception {
    WhaleResult r = run(client, "stagewise", TinyRun.spec("sw", "stagewise", ""));
    assertEquals(4, r.steps());
    List<RunEvent> history = client.newWorkflowStub(WhaleWorkflow.class, "stagewise").history();
    int lastStep = -1;
    int firstCandidate = Integer.MAX_VALUE;
    for (int i = 0; i < history.size(); i++) {
      if (history.get(i).kind().equals("rsft-step")) {
        lastStep = i;
      } else if (history.get(i).kind().equals("candidate")) {
        firstCandidate = Math.min(firstCandidate, i);
      }
    }
    assertTrue(lastStep < firstCandidate, "every weight step precedes every harness iteration");
    List<RunEvent> candidates = events(client, "stagewise", "candidate");
    // all of whale's harness iterations (1 phase x I = 2) in one phase
    assertEquals(2, candidates.stream().mapToInt(RunEvent::iteration).max().orElseThrow());
    assertEquals(4L * TinyRun.PROMPTS * TinyRun.SAMPLES + harnessRollouts(candidates), r.rollouts());
    Histories.replayAndKeep(client, "stagewise", "stagewise");
  }

  @Test
  void fstProposesPromptOnlyCandidates(WorkflowClient client) throws Exception {
    WhaleResult r = run(client, "fst", TinyRun.spec("fst", "fst", ""));
    assertEquals(4, r.steps());
    List<RunEvent> later = events(client, "fst", "candidate").stream()
        .filter(e -> e.iteration() > 1).toList();
    assertFalse(later.isEmpty());
    for (RunEvent e : later) {
      String src = runtime.store().getString(e.harnessRef());
      assertTrue(src.contains("format="), src);
      // the template proposer, told prompt-only, mutates the prompt format only
      assertTrue(e.success() != null, "a prompt-only template candidate passes the validator: " + e.note());
    }
    Histories.replayAndKeep(client, "fst", "fst");
  }

  @Test
  void adaptiveEndsWeightPhasesByPatienceAndHarnessPhasesByTheirRule(WorkflowClient client)
      throws Exception {
    // patience 0.25 epoch = 1 step, burn-in 1 step, window 1 step; harness: 1..3 iterations,
    // stop after 1 without a better best
    ExperimentSpec spec = TinyRun.spec("adaptive", "whale-adaptive", """
        , "workflow": { "continueAsNewAfter": 0 }""").withScheduleAndSeed("whale-adaptive", 7);
    spec = whale.workflows.SpecJson.parse(whale.workflows.SpecJson.write(spec)
        .replace("\"windowEpochs\" : 0.2", "\"windowEpochs\" : 0.25")
        .replace("\"burnInEpochs\" : 0.2", "\"burnInEpochs\" : 0.25")
        .replace("\"patienceEpochs\" : 0.2", "\"patienceEpochs\" : 0.25")
        .replace("\"harnessMinIterations\" : 6", "\"harnessMinIterations\" : 1")
        .replace("\"harnessPatience\" : 2", "\"harnessPatience\" : 1")
        .replace("\"harnessMaxIterations\" : 15", "\"harnessMaxIterations\" : 3"));
    WhaleResult r = run(client, "adaptive", spec);
    assertEquals(4, r.steps(), "the budget is spent in full");
    Map<Integer, List<Integer>> stepsByRound = events(client, "adaptive", "rsft-step").stream()
        .collect(Collectors.groupingBy(RunEvent::round,
            Collectors.mapping(RunEvent::step, Collectors.toList())));
    // patience fires at the earliest after burn-in (1 step) + patience (1 step): phases of >= 2 steps
    // unless the budget ends them
    for (var e : stepsByRound.entrySet()) {
      int last = e.getValue().get(e.getValue().size() - 1);
      assertTrue(e.getValue().size() >= 2 || last == 4, "round " + e.getKey() + ": " + e.getValue());
    }
    for (int round : events(client, "adaptive", "accept").stream().map(RunEvent::round).toList()) {
      int its = events(client, "adaptive", "candidate").stream().filter(c -> c.round() == round)
          .mapToInt(RunEvent::iteration).max().orElseThrow();
      assertTrue(its >= 1 && its <= 3, "round " + round + " ran " + its + " iterations");
    }
    Histories.replayAndKeep(client, "adaptive", "whale-adaptive");
  }

  @Test
  void continueAsNewInTheMiddleOfPhasesLosesNothing(WorkflowClient client) throws Exception {
    WhaleResult plain = run(client, "plain", TinyRun.spec("can", "whale", ""));
    // every run of every whale workflow hands over after one unit of work
    WhaleResult handed = run(client, "handed", TinyRun.spec("can", "whale", """
        , "workflow": { "continueAsNewAfter": 1 }"""));
    assertEquals(plain.steps(), handed.steps());
    assertEquals(plain.rollouts(), handed.rollouts());
    assertEquals(plain.testRollouts(), handed.testRollouts());
    assertEquals(plain.checkpointRef(), handed.checkpointRef(), "the same RSFT steps on the same data");
    assertEquals(plain.harnessRef(), handed.harnessRef());
    assertEquals(plain.evaluations().stream().map(RunEvent::meanAt8).toList(),
        handed.evaluations().stream().map(RunEvent::meanAt8).toList());
    // the weight phase of round 1 (2 steps) continued as new mid-phase; so did the parent
    assertTrue(client.fetchHistory("handed/r1-weight").getEvents().stream().anyMatch(e ->
        e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
            && !e.getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId().isEmpty()));
    WhaleStatus s = client.newWorkflowStub(WhaleWorkflow.class, "handed").status();
    assertTrue(s.continuedAsNew() >= 1, "parent continued as new " + s.continuedAsNew() + " times");
    Histories.replayAndKeep(client, "handed", "continue-as-new");
  }

  @Test
  void updatesAreValidatedAndApplied(WorkflowClient client) throws Exception {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("updates"));
    stub.signalWithStart("pause", new Object[] {}, new Object[] {TinyRun.spec("updates"), null});
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "updates");
    waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));

    rejected(() -> wf.switchPhase(), "paused");
    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(null, null, null, null))), "nothing to change");
    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(null, 0.5, null, null))), "no patience rule");
    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(-1.0, null, null, null))), "weightBudgetEpochs");
    // budget 1 epoch -> 1.5 epochs (6 steps), accepted while paused
    String applied = wf.adjust(Payloads.tree(new Adjustment(1.5, null, null, null)));
    assertTrue(applied.contains("weight budget 6 steps"), applied);
    wf.resume();
    // two steps done, so 0.25 epoch (1 step) is below them whenever the update lands; waiting for
    // one step raced: with exactly one done, 1 step is not below and the update was accepted
    WhaleStatus running = waitFor(wf, st -> st.step() >= 2 && st.phaseWorkflowId() != null);
    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(0.25, null, null, null))), "below");
    WhaleResult r = stub.getResult(WhaleResult.class);
    assertEquals(6, r.steps(), "the adjusted budget is spent");
    // after the end the server itself refuses updates: a closed run takes none
    assertThrows(WorkflowNotFoundException.class, () -> wf.switchPhase());
    assertThrows(WorkflowNotFoundException.class, () -> wf.adjust(Payloads.tree(new Adjustment(2.0, null, null, null))));
    assertTrue(running.step() >= 1);
    assertEquals(List.of(), running.rejected(), "the phases' own progress reports are all taken");
  }

  @Test
  void switchPhaseUpdateEndsTheRunningPhase(WorkflowClient client) throws Exception {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("switch-update"));
    stub.signalWithStart("pause", new Object[] {}, new Object[] {TinyRun.spec("su"), null});
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "switch-update");
    waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));
    rejected(() -> wf.switchPhase(), "paused");
    wf.resume();
    waitFor(wf, s -> s.phaseWorkflowId() != null && s.phase().equals("weight"));
    String reply = wf.switchPhase();
    assertTrue(reply.contains("weight phase of round 1 ends"), reply);
    rejected(() -> wf.switchPhase(), "already pending");
    WhaleResult r = stub.getResult(WhaleResult.class);
    Map<Integer, Long> stepsPerRound = r.evaluations().isEmpty() ? Map.of()
        : events(client, "switch-update", "rsft-step").stream()
            .collect(Collectors.groupingBy(RunEvent::round, Collectors.counting()));
    assertEquals(1L, stepsPerRound.get(1), "round 1 cut after its running step");
    assertEquals(4, r.steps(), "the budget is still spent");
  }

  private static void rejected(Runnable update, String why) {
    try {
      update.run();
      fail("update accepted; expected a rejection mentioning '" + why + "'");
    } catch (WorkflowUpdateException e) {
      String msg = String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
      assertTrue(msg.contains(why), "rejection '" + msg + "' should mention '" + why + "'");
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
