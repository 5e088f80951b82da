package whale.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.UpdateValidatorMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.util.List;

/**
 * One WHALE run under the spec's schedule (whale, whale-adaptive, weight-only, harness-only,
 * stagewise, fst): each weight phase is a {@link WeightPhaseWorkflow} child and each harness phase a
 * {@link HarnessSearchWorkflow} child; test mean@k periodically and after every phase. Type name
 * {@code WhaleWorkflow}, task queue {@code whale-control}.
 */
@WorkflowInterface
public interface WhaleWorkflow {
  String TASK_QUEUE = "whale-control";

  /**
   * @param spec the experiment
   * @param resume null when a user starts the run ({@code temporal workflow start --input-file
   *     spec.json} passes the spec alone); the state carried over when the run continues as new
   */
  @WorkflowMethod
  WhaleResult run(ExperimentSpec spec, WhaleState resume);

  /**
   * Ends the current phase at the next step (or iteration) boundary. Unchecked, for {@code temporal
   * workflow signal}; prefer the {@link #switchPhase()} update, which says whether it was accepted.
   */
  @SignalMethod
  void forcePhaseSwitch();

  /** Holds the run at the next step boundary until {@link #resume()}. */
  @SignalMethod
  void pause();

  @SignalMethod
  void resume();

  /** Finishes the current step, evaluates, and returns the result. */
  @SignalMethod
  void stop();

  /**
   * Internal: a phase child's live progress, a {@link PhaseProgress} as JSON (ignored unless it comes
   * from the current phase). Raw JSON so that a malformed payload reaches the handler, which records
   * why it was ignored in {@link WhaleStatus#rejected()}, instead of failing in the SDK's converter.
   */
  @SignalMethod
  void phaseProgress(JsonNode progress);

  /** Ends the current phase at the next step or iteration boundary; returns what will happen. */
  @UpdateMethod
  String switchPhase();

  /** Rejects a switch before the first phase, while paused, while stopping, after the end, or twice. */
  @UpdateValidatorMethod(updateName = "switchPhase")
  void validateSwitchPhase();

  /**
   * Changes the remaining weight budget or the adaptive patience; returns the new limits. The payload
   * is an {@link Adjustment} as JSON (from Java: {@code Payloads.tree(new Adjustment(...))}), read
   * strictly by the validator: a wrong type, an unknown field or null is rejected by name.
   */
  @UpdateMethod
  String adjust(JsonNode adjustment);

  /**
   * Rejects a malformed payload, an empty change, a budget below what is spent, patience for a fixed
   * schedule, or a late one.
   */
  @UpdateValidatorMethod(updateName = "adjust")
  void validateAdjust(JsonNode adjustment);

  @QueryMethod
  WhaleStatus status();

  @QueryMethod
  List<RunEvent> history();
}
