package whale.workflows;

import io.temporal.workflow.Workflow;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.MeanAtKResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.Seeds;

/**
 * One constant per use of randomness, so seeds never collide across uses; and the test evaluation
 * every whale workflow runs the same way (same seed: an evaluation of the same checkpoint and harness
 * is the same request, answered once by the eval activity's memo).
 */
final class SeedStreams {
  static final long SAMPLER = 1, PRETRAIN = 2, STEP = 3, HARNESS_SCORE = 4, TEST = 5, PROPOSE = 6;

  private SeedStreams() {}

  /** A test evaluation and the rollouts it spent (counted apart from training rollouts). */
  record Evaluated(RunEvent event, int rollouts) {}

  static Evaluated testEval(ExperimentSpec spec, String phase, int round, int steps, long rollouts,
      String checkpointRef, String harnessRef, String label) {
    MeanAtKResult r = WorkflowStubs.eval("test mean@" + spec.eval().k() + " after " + label)
        .evaluate(new EvalRequest(TaskRef.of(spec), checkpointRef, harnessRef,
            EvalRequest.Split.TEST, spec.eval().k(), Seeds.mix(spec.seed(), TEST),
            EpisodeSettings.of(spec), label));
    return new Evaluated(RunEvent.testEval(phase, round, steps, rollouts, r.meanAtK(), r.passAtK(),
        r.majAtK(), r.meanTurns(), checkpointRef, harnessRef, Workflow.currentTimeMillis()),
        r.rollouts());
  }
}
