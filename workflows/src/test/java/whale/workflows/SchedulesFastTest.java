package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static whale.workflows.FastRuns.SCORE_ROLLOUTS;
import static whale.workflows.FastRuns.STEP_ROLLOUTS;
import static whale.workflows.FastRuns.TEST_ROLLOUTS;
import static whale.workflows.FastRuns.curve;
import static whale.workflows.FastRuns.options;
import static whale.workflows.FastRuns.spec;
import static whale.workflows.FastRuns.stepsByRound;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import whale.workflows.Fakes.Score;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.RetainRequest;
import whale.workflows.activities.RsftStepRequest;

/**
 * Every schedule whale runs, on the test server with the real workflows and scripted fake
 * activities: which activities run in which order, and what the run makes of the scripted numbers
 * (the phases' lengths, the accepted harness, rollout accounting, the best test mean@k and where it
 * was reached). Seconds, no model.
 */
@Timeout(60)
class SchedulesFastTest extends FastTierTest {
  @RegisterExtension
  static final TestWorkflowExtension temporal = FastRuns.extension();

  private static WhaleWorkflow stub(WorkflowClient client, String id) {
    return client.newWorkflowStub(WhaleWorkflow.class, options(id));
  }

  @Test
  void whaleAlternatesFixedPhasesAndAcceptsTheParetoFirstHarness(TestWorkflowEnvironment env,
      WorkflowClient client) {
    // round 1: c1 and c2 tie on success, c2 takes fewer turns; round 2: c1 is invalid and c2
    // scores below the incoming harness, which stays
    fakes.harnessScore = Fakes.scores(Map.of(
        "h0", new Score(0.30, 2.0),
        "r1i2c1", new Score(0.50, 3.0),
        "r1i2c2", new Score(0.50, 2.5),
        "r2i2c2", new Score(0.20, 2.0)), new Score(0, 9));
    fakes.invalid.add("r2i2c1");
    fakes.testMean = Fakes.table(Map.of("0@h0", 0.10, "2@h0", 0.20, "2@r1i2c2", 0.35,
        "4@r1i2c2", 0.50, "6@r1i2c2", 0.45));

    WhaleWorkflow wf = stub(client, "whale");
    WhaleResult r = wf.run(spec("whale"), null);

    assertEquals(List.of(
        "base", "h0", "test 0@h0: base",
        "step 1 @h0", "step 2 @h0", "test 2@h0: step 2 (0.50 epochs)",
        "score h0 @2", "propose r1 i2", "score r1i2c1 @2", "score r1i2c2 @2",
        "test 2@r1i2c2: round 1 harness end",
        "step 3 @r1i2c2", "step 4 @r1i2c2", "test 4@r1i2c2: step 4 (1.00 epochs)",
        "score r1i2c2 @4", "propose r2 i2", "score r2i2c2 @4",
        "test 4@r1i2c2: round 2 harness end",
        "step 5 @r1i2c2", "step 6 @r1i2c2", "test 6@r1i2c2: step 6 (1.50 epochs)"),
        fakes.lines("whale"));

    assertEquals(3, r.rounds());
    assertEquals(6, r.steps());
    assertFalse(r.stopped());
    assertEquals("r1i2c2", r.harnessName());
    assertEquals(fakes.checkpoint("whale", 6), r.checkpointRef());
    // 6 steps; round 1: h0 re-scored + 2 candidates; round 2: r1i2c2 re-scored + 1 valid candidate
    long h1 = 3 * SCORE_ROLLOUTS;
    long h2 = 2 * SCORE_ROLLOUTS;
    assertEquals(6 * STEP_ROLLOUTS + h1 + h2, r.rollouts());
    assertEquals(6 * TEST_ROLLOUTS, r.testRollouts());
    assertEquals(List.of("0 base 0 0.10", "1 weight 2 0.20", "1 harness 2 0.35",
        "2 weight 4 0.50", "2 harness 4 0.50", "3 weight 6 0.45"), curve(r.evaluations()));
    assertEquals(List.of(0L, 2L * STEP_ROLLOUTS, 2L * STEP_ROLLOUTS + h1, 4L * STEP_ROLLOUTS + h1,
        4L * STEP_ROLLOUTS + h1 + h2, 6L * STEP_ROLLOUTS + h1 + h2),
        r.evaluations().stream().map(RunEvent::rollouts).toList());
    // the best is the first of the two 0.50s
    assertEquals(0.10, r.baseMeanAt8());
    assertEquals(0.50, r.bestMeanAt8());
    assertEquals("round 2 weight, step 4", r.bestAt());
    assertEquals(4L * STEP_ROLLOUTS + h1, r.rolloutsAtBest());
    assertEquals(List.of(), r.deferredReleases(), "a run of its own deletes what it releases");

    // each harness phase starts a fresh archive from its incoming harness
    List<ProposeRequest> proposals = fakes.requests("whale", ProposeRequest.class);
    assertEquals(List.of(List.of("h0"), List.of("r1i2c2")), proposals.stream()
        .map(p -> p.archive().stream().map(a -> a.candidate().name()).toList()).toList());
    assertEquals(List.of("h0", "r1i2c2"),
        proposals.stream().map(p -> fakes.name(p.incomingRef())).toList());
    assertTrue(proposals.stream().noneMatch(ProposeRequest::promptOnly));

    List<RunEvent> history = wf.history();
    assertEquals(List.of("r1i2c2 @1/2", "r1i2c2 @2/1"), history.stream()
        .filter(e -> e.kind().equals("accept"))
        .map(e -> e.note() + " @" + e.round() + "/" + e.iteration()).toList());
    assertEquals(List.of("h0", "r1i2c1", "r1i2c2", "r1i2c2", "r2i2c1: scripted: does not compile",
        "r2i2c2"), history.stream().filter(e -> e.kind().equals("candidate")).map(RunEvent::note).toList());
    assertEquals(timelessEvaluations(history), FastRuns.timeless(r.evaluations()));

    WhaleStatus s = wf.status();
    assertEquals("done", s.phase());
    assertEquals(null, s.phaseWorkflowId());
    assertEquals(0, s.continuedAsNew());
    assertEquals(List.of(), s.rejected(), "every progress report of the phases was taken");
    assertEquals(r.rollouts(), s.rollouts());
    assertEquals(r.bestAt(), s.bestAt());

    // search attributes as the Web UI lists them
    Map<String, String> attrs = env.getWorkflowClient().getWorkflowServiceStubs().blockingStub()
        .describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
            .setNamespace(env.getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId("whale")).build())
        .getWorkflowExecutionInfo().getSearchAttributes().getIndexedFieldsMap().entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().getData().toStringUtf8()));
    assertEquals(Map.of("WhalePhase", "\"done\"", "WhaleRound", "3",
        "WhaleRollouts", Long.toString(r.rollouts()), "WhaleBestMeanAt8", "0.5"), attrs);
  }

  @Test
  void fstRunsWhalesPhasesButAsksForPromptOnlyCandidates(WorkflowClient client) {
    fakes.harnessScore = Fakes.scores(Map.of("r1i2c1", new Score(0.6, 2.0)), new Score(0.3, 2.0));
    WhaleResult r = stub(client, "fst").run(spec("fst"), null);

    assertEquals(List.of("propose r1 i2 prompt-only", "propose r2 i2 prompt-only"),
        fakes.lines("fst", "propose"));
    // each round's prompt-only candidates are checked against that round's incoming harness
    assertEquals(List.of("h0", "r1i2c1"), fakes.requests("fst", ProposeRequest.class).stream()
        .map(p -> fakes.name(p.incomingRef())).toList());
    assertEquals(List.of("step 1 @h0", "step 2 @h0", "step 3 @r1i2c1", "step 4 @r1i2c1",
        "step 5 @r1i2c1", "step 6 @r1i2c1"), fakes.lines("fst", "step"));
    assertEquals(3, r.rounds());
    assertEquals("r1i2c1", r.harnessName());
    assertEquals(6 * STEP_ROLLOUTS + 2 * 3 * SCORE_ROLLOUTS, r.rollouts());
  }

  @Test
  void adaptiveEndsWeightPhasesByPatienceAndHarnessPhasesByTheirRule(WorkflowClient client) {
    // budget 2 epochs = 8 steps; window, burn-in and patience 1 step each; harness phases of 2 to
    // 4 iterations that stop after 1 without a strictly better best; test only at phase ends
    ExperimentSpec spec = spec("whale-adaptive", """
        "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2, "weightBudgetEpochs": 2.0,
        "windowEpochs": 0.25, "burnInEpochs": 0.25, "patienceEpochs": 0.25,
        "harnessMinIterations": 2, "harnessPatience": 1, "harnessMaxIterations": 4""", 0, "");
    // round 1: the reward improves to step 3, not at 4: patience fires after step 4;
    // round 2: best at its first step (5), not at 6: fires after step 6; round 3: the budget ends it
    fakes.trainReward = Fakes.rewards(0.2, 0.3, 0.4, 0.35, 0.5, 0.4, 0.1, 0.2);
    // round 1: the best (0.40) is reached at iteration 2; iteration 3 only ties it (with fewer
    // turns): the search stops after 3 iterations and the tie, which dominates, is accepted
    fakes.harnessScore = Fakes.scores(Map.of(
        "h0", new Score(0.30, 2.0),
        "r1i2c1", new Score(0.40, 2.0), "r1i2c2", new Score(0.20, 2.0),
        "r1i3c1", new Score(0.40, 1.5), "r1i3c2", new Score(0.10, 2.0)), new Score(0.30, 2.0));
    fakes.testMean = (step, harness, seed) -> 0.1 + 0.05 * step + (harness.equals("h0") ? 0 : 0.1);

    WhaleResult r = stub(client, "adaptive").run(spec, null);

    assertEquals(List.of(
        "base", "h0", "test 0@h0: base",
        "step 1 @h0", "step 2 @h0", "step 3 @h0", "step 4 @h0", "test 4@h0: round 1 weight end",
        "score h0 @4", "propose r1 i2", "score r1i2c1 @4", "score r1i2c2 @4",
        "propose r1 i3", "score r1i3c1 @4", "score r1i3c2 @4",
        "test 4@r1i3c1: round 1 harness end",
        "step 5 @r1i3c1", "step 6 @r1i3c1", "test 6@r1i3c1: round 2 weight end",
        "score r1i3c1 @6", "propose r2 i2", "score r2i2c1 @6", "score r2i2c2 @6",
        "test 6@r1i3c1: round 2 harness end",
        "step 7 @r1i3c1", "step 8 @r1i3c1", "test 8@r1i3c1: round 3 weight end"),
        fakes.lines("adaptive"));
    assertEquals(Map.of(1, List.of(1, 2, 3, 4), 2, List.of(5, 6), 3, List.of(7, 8)),
        stepsByRound(client.newWorkflowStub(WhaleWorkflow.class, "adaptive").history()));
    assertEquals(List.of("patience", "patience", "budget"), List.of(
        ended(client, "adaptive/r1-weight", WeightPhaseResult.class).endedBy(),
        ended(client, "adaptive/r2-weight", WeightPhaseResult.class).endedBy(),
        ended(client, "adaptive/r3-weight", WeightPhaseResult.class).endedBy()));
    HarnessSearchResult h1 = ended(client, "adaptive/r1-harness", HarnessSearchResult.class);
    assertEquals("patience", h1.endedBy());
    assertEquals(3, h1.iterations());
    assertEquals(3, h1.winnerIteration());
    HarnessSearchResult h2 = ended(client, "adaptive/r2-harness", HarnessSearchResult.class);
    assertEquals("patience", h2.endedBy());
    assertEquals(2, h2.iterations());
    assertEquals("r1i3c1", h2.winner().name());
    assertEquals(1, h2.winnerIteration());

    assertEquals(3, r.rounds());
    assertEquals(8, r.steps());
    assertEquals("r1i3c1", r.harnessName());
    assertEquals(8 * STEP_ROLLOUTS + 5 * SCORE_ROLLOUTS + 3 * SCORE_ROLLOUTS, r.rollouts());
    assertEquals(6 * TEST_ROLLOUTS, r.testRollouts());
    assertEquals(0.6, r.bestMeanAt8(), 1e-12);
    assertEquals("round 3 weight, step 8", r.bestAt());
    assertEquals(r.rollouts(), r.rolloutsAtBest());
  }

  @Test
  void weightOnlySpendsTheBudgetInOnePhaseWalkingEachEpochOnceAndRetainsWhatItNeeds(
      WorkflowClient client) {
    // 28 problems, 8 per step: epochs of 4 steps whose last batch is short (8, 8, 8, 4)
    ExperimentSpec spec = SpecJson.parse(SpecJson.write(spec("weight-only"))
        .replace("\"weightProblems\" : 32", "\"weightProblems\" : 28"));
    fakes.testMean = Fakes.table(Map.of("0@h0", 0.1, "2@h0", 0.5, "4@h0", 0.4, "6@h0", 0.45));
    WhaleResult r = stub(client, "weight-only").run(spec, null);

    assertEquals(List.of("base", "h0", "test 0@h0: base",
        "step 1 @h0", "step 2 @h0", "test 2@h0: step 2 (0.50 epochs)",
        "step 3 @h0", "step 4 @h0", "test 4@h0: step 4 (1.00 epochs)",
        "step 5 @h0", "step 6 @h0", "test 6@h0: step 6 (1.50 epochs)"), fakes.lines("weight-only"));
    List<List<Integer>> batches = fakes.requests("weight-only", RsftStepRequest.class).stream()
        .map(RsftStepRequest::problems).toList();
    assertEquals(List.of(8, 8, 8, 4, 8, 8), batches.stream().map(List::size).toList());
    TreeSet<Integer> firstEpoch = new TreeSet<>();
    batches.subList(0, 4).forEach(firstEpoch::addAll);
    assertEquals(28, firstEpoch.size(), "no problem twice within an epoch: " + batches);
    assertEquals(0, firstEpoch.first());
    assertEquals(27, firstEpoch.last());

    assertEquals(1, r.rounds());
    assertEquals(6, r.steps());
    assertEquals("h0", r.harnessName());
    assertEquals(28L * 4 + 16L * 4, r.rollouts());
    assertEquals(0.5, r.bestMeanAt8());
    assertEquals("round 1 weight, step 2", r.bestAt());
    assertEquals(16L * 4, r.rolloutsAtBest());
    assertTrue(fakes.lines("weight-only", "propose").isEmpty());

    // retention (keepLast 2): the base, the best (c2), the last two steps, the phase's end; each
    // change pinned once, what left the held set released
    List<String> pins = new ArrayList<>();
    for (RetainRequest q : fakes.requests("weight-only", RetainRequest.class)) {
      assertEquals("weight-only", q.run());
      pins.add(names(q.held()) + " -" + names(q.released()));
    }
    assertEquals(List.of(
        "[base] -[]",
        "[base, c1] -[]",
        "[base, c1, c2] -[]",
        "[base, c2, c3] -[c1]",
        "[base, c2, c3, c4] -[]",
        "[base, c2, c4, c5] -[c3]",
        "[base, c2, c5, c6] -[c4]"), pins);
  }

  @Test
  void harnessOnlyRunsWhalesHarnessPhasesOnTheBaseWeights(WorkflowClient client) {
    fakes.harnessScore = Fakes.scores(Map.of("r1i2c1", new Score(0.5, 2.0),
        "r2i2c2", new Score(0.6, 2.0)), new Score(0.3, 2.0));
    fakes.testMean = Fakes.table(Map.of("0@h0", 0.1, "0@r1i2c1", 0.3, "0@r2i2c2", 0.25));
    WhaleResult r = stub(client, "harness-only").run(spec("harness-only"), null);

    // whale with this budget runs two harness phases (none after its third weight phase)
    assertEquals(List.of("base", "h0", "test 0@h0: base",
        "score h0 @0", "propose r1 i2", "score r1i2c1 @0", "score r1i2c2 @0",
        "test 0@r1i2c1: round 1 harness end",
        "score r1i2c1 @0", "propose r2 i2", "score r2i2c1 @0", "score r2i2c2 @0",
        "test 0@r2i2c2: round 2 harness end"), fakes.lines("harness-only"));
    assertEquals(2, r.rounds());
    assertEquals(0, r.steps());
    assertEquals(fakes.checkpoint("harness-only", 0), r.checkpointRef());
    assertEquals("r2i2c2", r.harnessName());
    assertEquals(6L * SCORE_ROLLOUTS, r.rollouts());
    assertEquals(0.3, r.bestMeanAt8());
    assertEquals("round 1 harness, step 0", r.bestAt());
    assertEquals(3L * SCORE_ROLLOUTS, r.rolloutsAtBest());
  }

  @Test
  void stagewiseRunsTheWholeBudgetThenAllOfWhalesHarnessIterationsInOnePhase(WorkflowClient client) {
    fakes.harnessScore = Fakes.scores(Map.of("r2i4c1", new Score(0.7, 2.0)), new Score(0.3, 2.0));
    WhaleResult r = stub(client, "stagewise").run(spec("stagewise"), null);

    // whale's 2 harness phases of 2 iterations: one phase of 4 (iteration 1 the re-score of h0)
    assertEquals(List.of("base", "h0", "test 0@h0: base",
        "step 1 @h0", "step 2 @h0", "test 2@h0: step 2 (0.50 epochs)",
        "step 3 @h0", "step 4 @h0", "test 4@h0: step 4 (1.00 epochs)",
        "step 5 @h0", "step 6 @h0", "test 6@h0: step 6 (1.50 epochs)",
        "score h0 @6", "propose r2 i2", "score r2i2c1 @6", "score r2i2c2 @6",
        "propose r2 i3", "score r2i3c1 @6", "score r2i3c2 @6",
        "propose r2 i4", "score r2i4c1 @6", "score r2i4c2 @6",
        "test 6@r2i4c1: round 2 harness end"), fakes.lines("stagewise"));
    assertEquals(2, r.rounds());
    assertEquals(6, r.steps());
    assertEquals("r2i4c1", r.harnessName());
    assertEquals(6 * STEP_ROLLOUTS + 7 * SCORE_ROLLOUTS, r.rollouts());
    assertEquals(5 * TEST_ROLLOUTS, r.testRollouts());
    assertEquals(List.of("0 base 0 0.10", "1 weight 2 0.20", "1 weight 4 0.30", "1 weight 6 0.40",
        "2 harness 6 0.40"), curve(r.evaluations()));
    assertEquals("round 1 weight, step 6", r.bestAt(), "the earlier of two equal results");
  }

  @Test
  void anInvalidSpecFailsTheRunBeforeAnyActivityAndNamesTheField(WorkflowClient client) {
    ExperimentSpec good = spec("whale");
    ExperimentSpec bad = new ExperimentSpec(good.name(), good.task(), good.seed(), "nope",
        good.data(), good.model(),
        new ExperimentSpec.RsftSpec(8, 4, 1.0, 20, 0.5, 64, -1.0, null, null, null),
        good.phases(), good.harness(), good.eval(), null, null, null, Map.of());
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> stub(client, "invalid").run(bad, null));
    ApplicationFailure f = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals("InvalidSpec", f.getType());
    assertTrue(f.getOriginalMessage().contains("schedule: must be one of"), f.getOriginalMessage());
    assertTrue(f.getOriginalMessage().contains("rsft.learningRate"), f.getOriginalMessage());
    assertEquals(List.of(), fakes.calls("invalid"));
  }

  @Test
  void anInvalidInitialHarnessFailsTheRunAfterTheBase(WorkflowClient client) {
    fakes.invalidH0 = true;
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> stub(client, "bad-h0").run(spec("whale"), null));
    ApplicationFailure f = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals("InvalidHarness", f.getType());
    assertEquals("the task's initial harness is invalid: scripted: h0 does not compile",
        f.getOriginalMessage());
    assertEquals(List.of("base", "h0"), fakes.lines("bad-h0"));
  }

  /** The final result of a finished phase child. */
  private static <T> T ended(WorkflowClient client, String id, Class<T> type) {
    return client.newUntypedWorkflowStub(id).getResult(type);
  }

  /** Checkpoint references as the script names them, sorted. */
  private List<String> names(List<String> refs) {
    return refs.stream().map(fakes::name).sorted().toList();
  }

  private static List<RunEvent> timelessEvaluations(List<RunEvent> history) {
    return FastRuns.timeless(history.stream().filter(e -> e.kind().equals("test-eval")).toList());
  }
}
