package whale.workflows.activities;

import io.temporal.activity.ActivityInterface;

/** Weight-side work, on task queue {@code whale-gpu}. */
@ActivityInterface
public interface WeightActivities {
  String TASK_QUEUE = "whale-gpu";

  /** The base checkpoint's reference; computed once per request and reused after that. */
  String prepareBaseModel(BaseModelRequest request);

  RsftStepResult rsftStep(RsftStepRequest request);

  /** Checkpoint retention: the run's pin rewritten, released checkpoints no run pins deleted. */
  RetainResult retainCheckpoints(RetainRequest request);
}
