package whale.workflows;

import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * One Meta-Harness phase as a child workflow: re-score the incoming harness under the new weights
 * (iteration 1), then each iteration propose M candidates from the archive and score them on
 * D_harness; accept the Pareto-first candidate. Continues as new between iterations when its history
 * grows.
 */
@WorkflowInterface
public interface HarnessSearchWorkflow {
  @WorkflowMethod
  HarnessSearchResult run(HarnessSearchInput input);

  @SignalMethod
  void pause();

  @SignalMethod
  void resume();

  /** Ends the search after the current iteration (the winner so far is accepted). */
  @SignalMethod
  void forcePhaseSwitch();

  @SignalMethod
  void stop();

  /**
   * New adaptive harness rule: {@link whale.workflows.schedule.Limits} as JSON, already
   * validated by the parent's update. Raw JSON and checked again on arrival: anyone can signal a
   * phase, and a malformed payload is logged and ignored rather than failing in the SDK's converter.
   */
  @SignalMethod
  void limits(com.fasterxml.jackson.databind.JsonNode limits);
}
