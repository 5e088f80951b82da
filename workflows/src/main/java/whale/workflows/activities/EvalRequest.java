package whale.workflows.activities;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import whale.workflows.Spelled;

/**
 * Sample {@code k} episodes per problem of a split under a checkpoint and a harness.
 *
 * @param split test for mean@k reporting, harness for scoring harness candidates
 * @param label a human label for summaries and traces ("round 2 weight phase end")
 */
public record EvalRequest(
    TaskRef task,
    String checkpointRef,
    String harnessRef,
    EvalRequest.Split split,
    int k,
    long seed,
    EpisodeSettings episodes,
    String label) {

  /**
   * The data an evaluation samples (the task's {@code whale.task.Split} without D_weight, which is
   * for training only: never reported or selected on); EvalActivitiesImpl maps one to the other.
   */
  public enum Split implements Spelled {
    /** D_test: mean@k reporting. */
    TEST("test"),
    /** D_harness: scoring harness candidates. */
    HARNESS("harness");

    private final String json;

    Split(String json) {
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

    @JsonCreator
    public static Split of(String json) {
      return Spelled.parse(Split.class, "split", json);
    }
  }
}
