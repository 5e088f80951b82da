package whale.activities;

import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import java.time.Duration;
import java.util.List;
import whale.harness.CompiledHarness;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.activities.EpisodeSettings;

/** Runs episodes for an activity: the same runner everywhere, heartbeating as batches go by. */
final class Episodes {
  private Episodes() {}

  static List<EpisodeResult> run(Generator model, Task task, CompiledHarness harness,
      List<TaskProblem> problems, int samples, long seed, EpisodeSettings s, String what) {
    EpisodeRunner runner = new EpisodeRunner(model, task, EpisodeRunner.Config.defaults()
        .withTurnBudget(s.turnBudget())
        .withEpisodeTimeout(Duration.ofSeconds(s.timeoutSeconds()))
        .withSampling(new SamplingParams(s.temperature(), s.topK())));
    ActivityExecutionContext ctx = activityContext();
    if (ctx != null) {
      int[] batches = {0};
      runner.setBatchListener((ids, requests) -> {
        batches[0]++;
        ctx.heartbeat(what + ": model batch " + batches[0] + " of " + requests.size());
      });
    }
    return runner.run(harness, problems, samples, seed);
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
