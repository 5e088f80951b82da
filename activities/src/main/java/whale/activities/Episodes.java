package whale.activities;

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
 * Runs episodes for an activity through the runtime's executor (sandbox processes), with a
 * checkpoint ({@link ActivityHeartbeat#progress}) as batches go by.
 */
final class Episodes {
  private Episodes() {}

  static List<EpisodeResult> run(EpisodeExecutor executor, Generator model, Task task, String harnessSource,
      List<TaskProblem> problems, int samples, long seed, EpisodeSettings s, String what) {
    EpisodeRunner.Config config = EpisodeRunner.Config.defaults()
        .withTurnBudget(s.turnBudget())
        .withModelLimits(model.limits())
        .withEpisodeTimeout(Duration.ofSeconds(s.timeoutSeconds()))
        .withSampling(new SamplingParams(s.temperature(), s.topK()))
        .withMaxTemperature(s.maxTemperature() == null ? s.temperature() : s.maxTemperature());
    // a core per model call (Cores.gated), never for the whole run: between calls it waits for its sandboxes
    List<EpisodeResult> results = executor.run(Cores.gated(model), task, harnessSource, problems, samples, seed,
        config, line -> ActivityHeartbeat.progress(what + ": " + line));
    for (EpisodeResult r : results) {
      if (r.status() != whale.harness.EpisodeStatus.COMPLETED) {
        WhaleMetrics.failedEpisode(r.status().name().toLowerCase(java.util.Locale.ROOT));
      }
    }
    return results;
  }
}
