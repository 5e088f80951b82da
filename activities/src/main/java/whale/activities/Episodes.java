package whale.activities;

import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import java.time.Duration;
import java.util.List;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.model.Generator;
import whale.sandbox.EpisodeExecutor;
import whale.model.SamplingParams;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.activities.EpisodeSettings;

/**
 * Runs episodes for an activity through the runtime's executor (sandbox processes), heartbeating as
 * batches go by.
 */
final class Episodes {
  private Episodes() {}

  static List<EpisodeResult> run(EpisodeExecutor executor, Generator model, Task task, String harnessSource,
      List<TaskProblem> problems, int samples, long seed, EpisodeSettings s, String what) {
    EpisodeRunner.Config config = EpisodeRunner.Config.defaults()
        .withTurnBudget(s.turnBudget())
        .withEpisodeTimeout(Duration.ofSeconds(s.timeoutSeconds()))
        .withSampling(new SamplingParams(s.temperature(), s.topK()));
    ActivityExecutionContext ctx = activityContext();
    List<EpisodeResult> results = executor.run(model, task, harnessSource, problems, samples, seed,
        config, line -> {
          if (ctx != null) {
            ctx.heartbeat(what + ": " + line);
          }
        });
    for (EpisodeResult r : results) {
      if (r.status() != whale.harness.EpisodeStatus.COMPLETED) {
        WhaleMetrics.failedEpisode(r.status().name().toLowerCase(java.util.Locale.ROOT));
      }
    }
    return results;
  }

  /** The activity context, or null when called outside an activity (unit tests, benchmarks). */
  static ActivityExecutionContext activityContext() {
    try {
      return Activity.getExecutionContext();
    } catch (IllegalStateException e) {
      return null;
    }
  }

  static void heartbeat(String details) {
    ActivityExecutionContext ctx = activityContext();
    if (ctx != null) {
      ctx.heartbeat(details);
    }
  }
}
