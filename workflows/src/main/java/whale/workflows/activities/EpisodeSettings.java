package whale.workflows.activities;

import whale.workflows.ExperimentSpec;

/** How an episode samples and what bounds it: the same in training, harness scoring and test. */
public record EpisodeSettings(double temperature, int topK, int turnBudget, int timeoutSeconds) {
  public static EpisodeSettings of(ExperimentSpec spec) {
    return new EpisodeSettings(spec.rsft().temperature(), spec.rsft().topK(),
        spec.harness().turnBudget(), spec.harness().episodeTimeoutSeconds());
  }
}
