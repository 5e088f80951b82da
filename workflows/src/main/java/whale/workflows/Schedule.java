package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * A run's schedule ({@code schedule} in the spec): which phases it runs, as {@link
 * whale.workflows.schedule.PhasePlanner} plans them.
 */
public enum Schedule implements Spelled {
  /** Weight phases of E epochs alternating with harness phases of I iterations. */
  WHALE("whale"),
  /** The same alternation, each phase ended by its patience rule. */
  WHALE_ADAPTIVE("whale-adaptive"),
  /** One weight phase of the whole budget with h0. */
  WEIGHT_ONLY("weight-only"),
  /** Harness phases only, with the base weights. */
  HARNESS_ONLY("harness-only"),
  /** One weight phase of the whole budget, then one harness phase. */
  STAGEWISE("stagewise"),
  /** As whale, but the harness search may change only prompt text (the Fast-Slow control). */
  FST("fst");

  private final String json;

  Schedule(String json) {
    this.json = json;
  }

  @JsonValue
  @Override
  public String json() {
    return json;
  }

  @Override
  public String toString() {
    return json;
  }

  /** The value spelled {@code json}; an error naming schedule and the allowed values otherwise. */
  @JsonCreator
  public static Schedule of(String json) {
    return Spelled.parse(Schedule.class, "schedule", json);
  }
}
