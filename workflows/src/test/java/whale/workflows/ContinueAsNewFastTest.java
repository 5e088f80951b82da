package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static whale.workflows.FastRuns.awaitSignal;
import static whale.workflows.FastRuns.options;
import static whale.workflows.FastRuns.runs;
import static whale.workflows.FastRuns.spec;

import io.temporal.client.WorkflowClient;
import io.temporal.testing.TestWorkflowExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import whale.workflows.Fakes.Score;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.RetainRequest;
import whale.workflows.activities.RsftStepRequest;

/**
 * Continue-as-new ({@code workflow.continueAsNewAfter}) in the parent between phases and in both
 * phase workflows mid-phase: a run handed over after every unit of work does exactly what an
 * uninterrupted one does, and the user's controls still reach a phase's current run.
 */
@Timeout(60)
class ContinueAsNewFastTest extends FastTierTest {
  @RegisterExtension
  static final TestWorkflowExtension temporal = FastRuns.extension();

  /** Whale's default spec with harness phases of 3 iterations, so that they hand over mid-phase too. */
  private static ExperimentSpec spec(int continueAsNewAfter) {
    return FastRuns.spec("whale", FastRuns.PHASES.replace("\"harnessIterationsPerPhase\": 2",
        "\"harnessIterationsPerPhase\": 3"), 0.5,
        ", \"workflow\": { \"continueAsNewAfter\": " + continueAsNewAfter + " }");
  }

  private static WhaleResult withoutTimes(WhaleResult r) {
    return new WhaleResult(r.name(), r.schedule(), r.baseMeanAt8(), r.bestMeanAt8(), r.bestAt(),
        r.rolloutsAtBest(), r.rollouts(), r.testRollouts(), r.rounds(), r.steps(), r.stopped(),
        r.checkpointRef(), r.harnessRef(), r.harnessName(), FastRuns.timeless(r.evaluations()),
        r.deferredReleases());
  }

  @Test
  void aRunThatContinuesAsNewAfterEveryUnitDoesWhatAnUninterruptedOneDoes(WorkflowClient client) {
    fakes.harnessScore = Fakes.scores(Map.of("r1i3c2", new Score(0.6, 2.0),
        "r2i2c1", new Score(0.7, 2.0)), new Score(0.3, 2.0));
    WhaleWorkflow plain = client.newWorkflowStub(WhaleWorkflow.class, options("plain"));
    WhaleResult expected = plain.run(spec(0), null);
    WhaleWorkflow handed = client.newWorkflowStub(WhaleWorkflow.class, options("handed"));
    WhaleResult r = handed.run(spec(1), null);

    // the parent handed over before each of its 4 later phases; each weight phase (2 steps) after
    // its first step, each harness phase (3 iterations) after its second iteration
    assertEquals(4, handed.status().continuedAsNew());
    assertEquals(5, runs(client, "handed"));
    for (String phase : List.of("r1-weight", "r1-harness", "r2-weight", "r2-harness", "r3-weight")) {
      assertEquals(2, runs(client, "handed/" + phase), phase);
      assertEquals(1, runs(client, "plain/" + phase), phase);
    }
    assertEquals(0, plain.status().continuedAsNew());

    // the same activities in the same order with the same inputs: the sampler, the checkpoint, the
    // harness archive and the retention state all carried over
    assertEquals(fakes.lines("plain"), fakes.lines("handed"));
    assertEquals(fakes.requests("plain", RsftStepRequest.class),
        fakes.requests("handed", RsftStepRequest.class));
    assertEquals(
        fakes.requests("plain", ProposeRequest.class).stream().map(ProposeRequest::archive).toList(),
        fakes.requests("handed", ProposeRequest.class).stream().map(ProposeRequest::archive).toList());
    assertEquals(3, fakes.requests("handed", ProposeRequest.class).get(1).archive().size(),
        "iteration 3 of round 1 (after the hand-over) still sees h0 and iteration 2's candidates");
    assertEquals(
        fakes.requests("plain", RetainRequest.class).stream().map(q -> List.of(q.held(), q.released())).toList(),
        fakes.requests("handed", RetainRequest.class).stream().map(q -> List.of(q.held(), q.released())).toList());

    assertEquals(withoutTimes(expected), withoutTimes(r));
    assertEquals(FastRuns.timeless(plain.history()), FastRuns.timeless(handed.history()));
    assertEquals("r2i2c1", r.harnessName());
    assertEquals(6, r.steps());
    assertEquals(List.of(), handed.status().rejected(), "progress reports numbered across runs");
  }

  @Test
  void aStopReachesAWeightPhaseThatContinuedAsNew(WorkflowClient client) throws Exception {
    // weight phases of 3 steps; the phase hands over after step 1 and is stopped during step 2
    ExperimentSpec spec = FastRuns.spec("whale", FastRuns.PHASES.replace(
        "\"weightEpochsPerPhase\": 0.5", "\"weightEpochsPerPhase\": 0.75"), 0.5,
        ", \"workflow\": { \"continueAsNewAfter\": 1 }");
    Fakes.Gate step2 = fakes.holdAt("step 2 @h0");
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("stop-handed"));
    WorkflowClient.start(wf::run, spec, (WhaleState) null);
    step2.awaitEntered();
    assertEquals(2, runs(client, "stop-handed/r1-weight"), "step 2 runs in the phase's second run");
    wf.stop();
    awaitSignal(client, "stop-handed/r1-weight", "stop");
    step2.release();
    WhaleResult r = client.newUntypedWorkflowStub("stop-handed").getResult(WhaleResult.class);

    assertEquals("stop", client.newUntypedWorkflowStub("stop-handed/r1-weight")
        .getResult(WeightPhaseResult.class).endedBy());
    assertTrue(r.stopped());
    assertEquals(2, r.steps());
    assertEquals(List.of("base", "h0", "test 0@h0: base", "step 1 @h0", "step 2 @h0",
        "test 2@h0: step 2 (0.50 epochs)"), fakes.lines("stop-handed"));
    assertEquals(List.of("0 base 0 0.10", "1 weight 2 0.20"), FastRuns.curve(r.evaluations()));
  }
}
