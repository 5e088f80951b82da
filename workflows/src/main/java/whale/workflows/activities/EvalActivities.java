package whale.workflows.activities;

import io.temporal.activity.ActivityInterface;

/** Rollout-heavy scoring, on task queue {@code whale-eval}: test mean@k and harness candidates. */
@ActivityInterface
public interface EvalActivities {
  String TASK_QUEUE = "whale-eval";

  MeanAtKResult evaluate(EvalRequest request);
}
