package whale.workflows.activities;

import com.fasterxml.jackson.annotation.JsonInclude;
import whale.workflows.ExperimentSpec;

/**
 * How an episode samples and what bounds it: the same in training, harness scoring and test.
 *
 * @param maxTemperature the highest temperature a chat turn may ask for ({@code
 *     harness.maxTemperature}); null: {@code temperature} (absent from the JSON then, so activity
 *     inputs and their memo keys stay what they were)
 * @param rollouts where the model calls are sampled; null: in the worker ({@code local}), absent from
 *     the JSON as before
 */
public record EpisodeSettings(double temperature, int topK, int turnBudget, int timeoutSeconds,
    @JsonInclude(JsonInclude.Include.NON_NULL) Double maxTemperature,
    @JsonInclude(JsonInclude.Include.NON_NULL) Rollouts rollouts) {
  /** Local sampling at one temperature (the tests' episodes). */
  public EpisodeSettings(double temperature, int topK, int turnBudget, int timeoutSeconds) {
    this(temperature, topK, turnBudget, timeoutSeconds, null, null);
  }

  /** Whether episodes sample on vLLM servers. */
  public boolean onVllm() {
    return rollouts != null && rollouts.vllm();
  }

  public static EpisodeSettings of(ExperimentSpec spec) {
    return new EpisodeSettings(spec.rsft().temperature(), spec.rsft().topK(),
        spec.harness().turnBudget(), spec.harness().episodeTimeoutSeconds(),
        spec.harness().maxTemperature(),
        spec.rollouts() != null && spec.rollouts().vllm() ? spec.rollouts() : null);
  }
}
