package whale.workflows;

import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * One weight phase as a child workflow: online RSFT steps under the current harness until the phase's
 * length (fixed), the patience rule (adaptive), the budget, a forced switch or a stop ends it. Test
 * mean@k every {@code eval.everyEpochs}. Continues as new mid-phase when its history grows.
 */
@WorkflowInterface
public interface WeightPhaseWorkflow {
  @WorkflowMethod
  WeightPhaseResult run(WeightPhaseInput input);

  @SignalMethod
  void pause();

  @SignalMethod
  void resume();

  /** Ends the phase after the current step. */
  @SignalMethod
  void forcePhaseSwitch();

  @SignalMethod
  void stop();

  /**
   * New budget or patience: {@link whale.workflows.schedule.Limits} as JSON, already
   * validated by the parent's update. Raw JSON and checked again on arrival: anyone can signal a
   * phase, and a malformed payload is logged and ignored rather than failing in the SDK's converter.
   */
  @SignalMethod
  void limits(com.fasterxml.jackson.databind.JsonNode limits);
}
