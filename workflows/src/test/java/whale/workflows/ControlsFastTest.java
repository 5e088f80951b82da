package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static whale.workflows.FastRuns.STEP_ROLLOUTS;
import static whale.workflows.FastRuns.TEST_ROLLOUTS;
import static whale.workflows.FastRuns.awaitIdle;
import static whale.workflows.FastRuns.awaitSignal;
import static whale.workflows.FastRuns.awaitSignals;
import static whale.workflows.FastRuns.options;
import static whale.workflows.FastRuns.rejected;
import static whale.workflows.FastRuns.spec;
import static whale.workflows.FastRuns.stepsByRound;
import static whale.workflows.FastRuns.waitFor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import whale.workflows.schedule.HarnessPatience;
import whale.workflows.schedule.Limits;

/**
 * The run's controls on the test server with the real workflows and fake activities: the signals
 * (forcePhaseSwitch, pause, resume, stop, phaseProgress), the updates (switchPhase, adjust) with
 * their validators, and the queries. A control aimed at a running phase is sent while the fakes hold
 * that phase's activity, so where it lands is exact.
 */
@Timeout(60)
class ControlsFastTest extends FastTierTest {
  @RegisterExtension
  static final TestWorkflowExtension temporal = FastRuns.extension();

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Starts a run of the default whale spec held by {@code signal} before its first activity. */
  private static WorkflowStub startWith(WorkflowClient client, String id, String signal) {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options(id));
    stub.signalWithStart(signal, new Object[] {}, new Object[] {spec("whale"), null});
    return stub;
  }

  private static WhaleWorkflow start(WorkflowClient client, String id) {
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options(id));
    WorkflowClient.start(wf::run, spec("whale"), (WhaleState) null);
    return client.newWorkflowStub(WhaleWorkflow.class, id);
  }

  private static WhaleResult result(WorkflowClient client, String id) {
    return client.newUntypedWorkflowStub(id).getResult(WhaleResult.class);
  }

  private static String endedBy(WorkflowClient client, String phaseId) {
    return client.newUntypedWorkflowStub(phaseId).getResult(WeightPhaseResult.class).endedBy();
  }

  /** Whale's phases after round 1's weight phase was cut to one step: the budget is still spent. */
  private static final Map<Integer, List<Integer>> AFTER_A_ONE_STEP_FIRST_PHASE =
      Map.of(1, List.of(1), 2, List.of(2, 3), 3, List.of(4, 5), 4, List.of(6));

  @Test
  void aSwitchSignalledBeforeTheFirstPhaseCutsItAfterOneStep(WorkflowClient client) {
    startWith(client, "switch", "forcePhaseSwitch");
    WhaleResult r = result(client, "switch");
    assertEquals(AFTER_A_ONE_STEP_FIRST_PHASE,
        stepsByRound(client.newWorkflowStub(WhaleWorkflow.class, "switch").history()));
    assertEquals("switch", endedBy(client, "switch/r1-weight"));
    assertEquals("length", endedBy(client, "switch/r2-weight"), "the switch applied once");
    assertEquals(6, r.steps());
    assertEquals(4, r.rounds());
  }

  @Test
  void theSwitchPhaseUpdateEndsTheRunningWeightPhaseAfterItsStep(WorkflowClient client)
      throws Exception {
    Fakes.Gate step1 = fakes.holdAt("step 1 @h0");
    Fakes.Gate harnessEnd = fakes.holdAt("test 1@h0: round 1 harness end");
    WhaleWorkflow wf = start(client, "switch-update");
    step1.awaitEntered();
    assertEquals("the weight phase of round 1 ends after its current RSFT step", wf.switchPhase());
    rejected(wf::switchPhase, "a switch of this weight phase is already pending");
    awaitSignal(client, "switch-update/r1-weight", "forcePhaseSwitch");
    step1.release();

    // between phases (the parent evaluates the accepted harness) there is nothing to switch
    harnessEnd.awaitEntered();
    rejected(wf::switchPhase, "no phase is running (the run is in phase harness)");
    harnessEnd.release();

    WhaleResult r = result(client, "switch-update");
    assertEquals(AFTER_A_ONE_STEP_FIRST_PHASE, stepsByRound(wf.history()));
    assertEquals("switch", endedBy(client, "switch-update/r1-weight"));
    assertEquals(6, r.steps());
    // after the end the server refuses updates itself
    assertThrows(WorkflowNotFoundException.class, wf::switchPhase);
  }

  @Test
  void aSwitchSignalDuringAHarnessPhaseEndsItAfterTheRunningIteration(WorkflowClient client)
      throws Exception {
    // harness phases of 3 iterations: the switch arrives during iteration 2
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("harness-switch"));
    Fakes.Gate propose = fakes.holdAt("propose r1 i2");
    WorkflowClient.start(wf::run, spec("whale", FastRuns.PHASES.replace(
        "\"harnessIterationsPerPhase\": 2", "\"harnessIterationsPerPhase\": 3"), 0.5, ""), null);
    propose.awaitEntered();
    wf.forcePhaseSwitch();
    awaitSignal(client, "harness-switch/r1-harness", "forcePhaseSwitch");
    propose.release();
    WhaleResult r = result(client, "harness-switch");

    HarnessSearchResult h1 = client.newUntypedWorkflowStub("harness-switch/r1-harness")
        .getResult(HarnessSearchResult.class);
    assertEquals("switch", h1.endedBy());
    assertEquals(2, h1.iterations());
    assertEquals(List.of("propose r1 i2", "propose r2 i2", "propose r2 i3"),
        fakes.lines("harness-switch", "propose"));
    assertEquals(6, r.steps());
  }

  @Test
  void pausedBeforeTheFirstPhaseTheRunValidatesUpdatesRecordsBadSignalsAndResumes(
      WorkflowClient client) throws Exception {
    WorkflowStub stub = startWith(client, "paused", "pause");
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "paused");
    WhaleStatus held = waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));
    assertEquals("base", held.phase());
    assertEquals(0, held.step());
    assertEquals(6, held.budgetSteps());
    assertEquals(null, held.phaseWorkflowId());
    assertEquals(0, held.rollouts());
    assertEquals(TEST_ROLLOUTS, held.testRollouts());
    assertEquals("base", held.bestAt());
    assertEquals(List.of("base", "h0", "test 0@h0: base"), fakes.lines("paused"));

    rejected(wf::switchPhase, "the run is paused: resume it before switching phases");
    // malformed adjustments are refused naming the field; so are changes this schedule cannot take
    Map<String, String> refused = Map.of(
        "{\"weightBudgetEpochs\": \"2\"}", "weightBudgetEpochs: expected a number, got the string \"2\"",
        "{\"weightBudgetEpoch\": 2}", "weightBudgetEpoch: unknown field",
        "[1, 2]", "payload: expected an object, got an array",
        "null", "payload: expected an object, got null",
        "{}", "nothing to change",
        "{\"weightBudgetEpochs\": 0}", "weightBudgetEpochs: must be in (0, 1000], got 0.0",
        "{\"patienceEpochs\": 0.5}", "patienceEpochs: schedule whale has no patience rule",
        "{\"harnessPatience\": 3}", "only whale-adaptive has a harness patience rule");
    for (var bad : refused.entrySet()) {
      JsonNode payload = JSON.readTree(bad.getKey());
      rejected(() -> wf.adjust(payload), bad.getValue());
    }
    // a malformed progress report is recorded and ignored; a well-formed one from a phase that is
    // not running is ignored without a word
    stub.signal("phaseProgress", JSON.readTree("{\"seq\": \"x\"}"));
    stub.signal("phaseProgress", Payloads.tree(new PhaseProgress("paused/r9-weight", 1,
        RunEvent.step(9, 1, 32, 0.5, 16, 1.0, Fakes.ref("elsewhere")), 1, 0, 32, 0,
        Fakes.ref("elsewhere"))));
    WhaleStatus after = waitFor(wf, s -> !s.rejected().isEmpty());
    assertEquals(List.of("signal phaseProgress ignored: seq: expected an integer, got the string \"x\""),
        after.rejected());
    assertEquals(held, new WhaleStatus(after.phase(), after.paused(), after.stopRequested(),
        after.round(), after.step(), after.budgetSteps(), after.harnessIteration(), after.rollouts(),
        after.testRollouts(), after.bestMeanAt8(), after.bestAt(), after.rolloutsAtBest(),
        after.checkpointRef(), after.harnessRef(), after.harnessName(), after.phaseWorkflowId(),
        after.continuedAsNew(), List.of()), "nothing changed but the record of what was ignored");

    // a valid adjustment applies while paused: budget 1 epoch = 4 steps, two rounds
    assertEquals("weight budget 4 steps (1.00 epochs, 0 done); patience 1 steps; harness phases: at "
        + "least 6 iterations, stop after 2 without a better best, at most 15",
        wf.adjust(Payloads.tree(new Adjustment(1.0, null, null, null))));
    assertEquals(4, wf.status().budgetSteps());
    assertEquals(List.of("base", "h0", "test 0@h0: base"), fakes.lines("paused"));
    wf.resume();
    WhaleResult r = stub.getResult(WhaleResult.class);
    assertEquals(4, r.steps());
    assertEquals(2, r.rounds());
    assertFalse(r.stopped());
  }

  @Test
  void pauseMidPhaseHoldsItAtTheNextStepAndAnAdjustedBudgetReachesTheRunningPhase(
      WorkflowClient client) throws Exception {
    Fakes.Gate step3 = fakes.holdAt("step 3 @h0");
    WhaleWorkflow wf = start(client, "pause-mid");
    step3.awaitEntered();
    wf.pause();
    awaitSignal(client, "pause-mid/r2-weight", "pause");
    step3.release();
    awaitIdle(client, "pause-mid/r2-weight");
    WhaleStatus s = waitFor(wf, st -> st.step() == 3);
    assertEquals(List.of("step 1 @h0", "step 2 @h0", "step 3 @h0"), fakes.lines("pause-mid", "step"),
        "no step runs while paused");
    // the parent's live view, from the phase's progress reports
    assertTrue(s.paused());
    assertEquals("weight", s.phase());
    assertEquals(2, s.round());
    assertEquals("pause-mid/r2-weight", s.phaseWorkflowId());
    assertEquals(fakes.checkpoint("pause-mid", 3), s.checkpointRef());
    long harnessRollouts = 3L * FastRuns.SCORE_ROLLOUTS;
    assertEquals(3 * STEP_ROLLOUTS + harnessRollouts, s.rollouts());
    assertEquals(List.of(), s.rejected());

    rejected(wf::switchPhase, "paused");
    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(0.5, null, null, null))),
        "weightBudgetEpochs: 0.5 epochs is 2 steps, below the 3 steps already done (0.75 epochs)");
    // anyone can signal a phase: malformed limits are ignored there, the run's own are taken
    WorkflowStub phase = client.newUntypedWorkflowStub("pause-mid/r2-weight");
    phase.signal("limits", JSON.readTree("{\"budgetSteps\": \"lots\"}"));
    phase.signal("limits", Payloads.tree(new Limits(4, 2, 0, 2, 30, 1, 0, 1, HarnessPatience.DEFAULT)));
    assertTrue(wf.adjust(Payloads.tree(new Adjustment(0.75, null, null, null)))
        .startsWith("weight budget 3 steps (0.75 epochs, 3 done)"));
    // the two sent here and the run's own
    awaitSignals(client, "pause-mid/r2-weight", "limits", 3);
    wf.resume();
    WhaleResult r = result(client, "pause-mid");

    // the phase ends by the new budget at once; no harness phase follows a spent budget
    assertEquals("budget", endedBy(client, "pause-mid/r2-weight"));
    assertEquals(3, r.steps());
    assertEquals(2, r.rounds());
    assertEquals(Map.of(1, List.of(1, 2), 2, List.of(3)), stepsByRound(wf.history()));
    assertEquals(List.of("propose r1 i2"), fakes.lines("pause-mid", "propose"));
    assertEquals(3 * STEP_ROLLOUTS + harnessRollouts, r.rollouts());
  }

  @Test
  void aHarnessPhasePausedAtAnIterationBoundaryEndsByItsAdjustedRuleOnResume(WorkflowClient client)
      throws Exception {
    // whale-adaptive: harness phases of 2..4 iterations, patience 3; equal scores never improve
    ExperimentSpec spec = spec("whale-adaptive", """
        "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2, "weightBudgetEpochs": 1.0,
        "windowEpochs": 0.25, "burnInEpochs": 0.25, "patienceEpochs": 0.25,
        "harnessMinIterations": 2, "harnessPatience": 3, "harnessMaxIterations": 4""", 0, "");
    Fakes.Gate propose = fakes.holdAt("propose r1 i2");
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("harness-pause"));
    WorkflowClient.start(wf::run, spec, (WhaleState) null);
    propose.awaitEntered();
    wf.pause();
    awaitSignal(client, "harness-pause/r1-harness", "pause");
    propose.release();
    awaitIdle(client, "harness-pause/r1-harness");
    assertEquals(List.of("propose r1 i2"), fakes.lines("harness-pause", "propose"));
    // at most 2 iterations: the phase, held after its second, has run them all
    assertTrue(wf.adjust(Payloads.tree(new Adjustment(null, null, null, 2))).endsWith("at most 2"));
    awaitSignal(client, "harness-pause/r1-harness", "limits");
    wf.resume();
    WhaleResult r = result(client, "harness-pause");

    HarnessSearchResult h1 = client.newUntypedWorkflowStub("harness-pause/r1-harness")
        .getResult(HarnessSearchResult.class);
    assertEquals(2, h1.iterations(), "no iteration beyond the adjusted maximum");
    assertEquals("length", h1.endedBy());
    // round 2's weight phase spends the budget (4 steps): no harness phase follows it
    assertEquals(List.of("propose r1 i2"), fakes.lines("harness-pause", "propose"));
    assertEquals(Map.of(1, List.of(1, 2), 2, List.of(3, 4)), stepsByRound(wf.history()));
    assertEquals(4, r.steps());
  }

  @Test
  void stopFinishesTheRunningStepEvaluatesItAndReturns(WorkflowClient client) throws Exception {
    Fakes.Gate step1 = fakes.holdAt("step 1 @h0");
    WhaleWorkflow wf = start(client, "stop");
    step1.awaitEntered();
    wf.stop();
    awaitSignal(client, "stop/r1-weight", "stop");
    step1.release();
    WhaleResult r = result(client, "stop");

    assertEquals("stop", endedBy(client, "stop/r1-weight"));
    assertTrue(r.stopped());
    assertEquals(1, r.steps());
    assertEquals(1, r.rounds());
    assertEquals(List.of("base", "h0", "test 0@h0: base", "step 1 @h0", "test 1@h0: round 1 weight end"),
        fakes.lines("stop"));
    assertEquals(STEP_ROLLOUTS, r.rollouts());
    assertEquals(2 * TEST_ROLLOUTS, r.testRollouts());
    assertEquals(1, r.evaluations().get(1).step(), "the run evaluates its last step");

    // queries still answer after the end; updates are refused
    WhaleStatus s = wf.status();
    assertEquals("done", s.phase());
    assertTrue(s.stopRequested());
    assertEquals(1, s.step());
    assertThrows(WorkflowNotFoundException.class,
        () -> wf.adjust(Payloads.tree(new Adjustment(2.0, null, null, null))));
  }

  @Test
  void stopWhilePausedBeforeTheFirstPhaseReturnsTheBase(WorkflowClient client) throws Exception {
    WorkflowStub stub = startWith(client, "stop-paused", "pause");
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "stop-paused");
    waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));
    wf.stop();
    WhaleResult r = stub.getResult(WhaleResult.class);
    assertTrue(r.stopped());
    assertEquals(0, r.rounds());
    assertEquals(0, r.steps());
    assertEquals("base", r.bestAt());
    assertEquals(fakes.checkpoint("stop-paused", 0), r.checkpointRef());
    assertEquals(List.of("base", "h0", "test 0@h0: base"), fakes.lines("stop-paused"));
  }

  @Test
  void adaptiveLimitsAdjustedWhilePausedGovernItsHarnessPhases(WorkflowClient client)
      throws Exception {
    // whale-adaptive, budget 2 steps, harness phases of 2..4 iterations with patience 1
    ExperimentSpec spec = spec("whale-adaptive", """
        "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2, "weightBudgetEpochs": 0.5,
        "windowEpochs": 0.25, "burnInEpochs": 0.25, "patienceEpochs": 0.25,
        "harnessMinIterations": 2, "harnessPatience": 1, "harnessMaxIterations": 4""", 0, "");
    fakes.trainReward = step -> 0.5; // never improves after step 1: patience fires after step 2
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("adaptive-adjust"));
    stub.signalWithStart("pause", new Object[] {}, new Object[] {spec, null});
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "adaptive-adjust");
    waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));

    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(null, null, null, 1))),
        "harnessMaxIterations: must be at least the minimum of 2 iterations, got 1");
    rejected(() -> wf.adjust(Payloads.tree(new Adjustment(null, null, 0, null))),
        "harnessPatience: must be in [1, 1000], got 0");
    // budget 1 epoch (4 steps); harness phases stop after 3 iterations without a better best
    assertEquals("weight budget 4 steps (1.00 epochs, 0 done); patience 1 steps; harness phases: at "
        + "least 2 iterations, stop after 3 without a better best, at most 4",
        wf.adjust(Payloads.tree(new Adjustment(1.0, null, 3, null))));
    wf.resume();
    WhaleResult r = stub.getResult(WhaleResult.class);

    // equal scores: no iteration after the first improves, so patience 3 runs iterations 2..4
    assertEquals(List.of("propose r1 i2", "propose r1 i3", "propose r1 i4"),
        fakes.lines("adaptive-adjust", "propose"));
    assertEquals(Map.of(1, List.of(1, 2), 2, List.of(3, 4)), stepsByRound(wf.history()));
    assertEquals(4, r.steps());
    assertEquals("length", client.newUntypedWorkflowStub("adaptive-adjust/r1-harness")
        .getResult(HarnessSearchResult.class).endedBy(), "it ran to the most iterations");
  }
}
