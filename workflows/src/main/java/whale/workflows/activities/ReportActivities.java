package whale.workflows.activities;

import io.temporal.activity.ActivityInterface;

/** Renders comparison reports into the artifact store; on {@code whale-harness} (CPU, no model). */
@ActivityInterface
public interface ReportActivities {
  String TASK_QUEUE = HarnessActivities.TASK_QUEUE;

  ComparisonReport render(ReportRequest request);
}
