package whale.workflows;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.ReportActivities;
import whale.workflows.activities.RetainRequest;
import whale.workflows.activities.WeightActivities;
import whale.workflows.schedule.Retention;

/** Activity stubs with the options every whale workflow uses; each call carries a summary for the UI. */
final class WorkflowStubs {
  private WorkflowStubs() {}

  /**
   * Heartbeat timeout: a dead worker (kill -9) is noticed within 20 s and its activity retried
   * elsewhere. A live one is never timed out however busy its machine: each attempt heartbeats from
   * a 4 s ticker of its own (whale.activities.ActivityHeartbeat), not from its compute checkpoints.
   */
  private static final Duration HEARTBEAT = Duration.ofSeconds(20);

  private static final RetryOptions RETRY = RetryOptions.newBuilder()
      .setInitialInterval(Duration.ofSeconds(1))
      .setBackoffCoefficient(2.0)
      .setMaximumInterval(Duration.ofSeconds(30))
      .setMaximumAttempts(10)
      .setDoNotRetry(IllegalArgumentException.class.getName())
      .build();

  static WeightActivities weight(String summary) {
    return Workflow.newActivityStub(WeightActivities.class,
        options(WeightActivities.TASK_QUEUE, Duration.ofHours(2), summary));
  }

  static EvalActivities eval(String summary) {
    return Workflow.newActivityStub(EvalActivities.class,
        options(EvalActivities.TASK_QUEUE, Duration.ofHours(2), summary));
  }

  static HarnessActivities harness(String summary) {
    return Workflow.newActivityStub(HarnessActivities.class,
        options(HarnessActivities.TASK_QUEUE, Duration.ofMinutes(30), summary));
  }

  static ReportActivities report(String summary) {
    return Workflow.newActivityStub(ReportActivities.class,
        options(ReportActivities.TASK_QUEUE, Duration.ofMinutes(10), summary));
  }

  /**
   * Tells the store what the run holds when that changed (pins it, deletes what it released and no
   * run pins); the same state in, the same activity out, so a replay or a crashed run schedules
   * exactly what an uninterrupted one does.
   */
  static Retention retain(Retention r) {
    if (r == null || !r.pinDue()) {
      return r;
    }
    List<String> released = r.released();
    if (r.deferRelease()) { // pinned no more, deleted by the parent once every sibling is done with them
      weight(String.format(Locale.ROOT, "checkpoint retention: hold %d, release %d after the"
          + " comparison", r.held().size(), released.size()))
          .retainCheckpoints(new RetainRequest(r.run(), r.held(), List.of()));
      return r.pinnedNowDeferring();
    }
    weight(String.format(Locale.ROOT, "checkpoint retention: hold %d, release %d", r.held().size(),
        released.size())).retainCheckpoints(new RetainRequest(r.run(), r.held(), released));
    return r.pinnedNow();
  }

  private static ActivityOptions options(String queue, Duration startToClose, String summary) {
    return ActivityOptions.newBuilder()
        .setTaskQueue(queue)
        .setStartToCloseTimeout(startToClose)
        .setHeartbeatTimeout(HEARTBEAT)
        .setRetryOptions(RETRY)
        .setSummary(summary)
        .build();
  }
}
