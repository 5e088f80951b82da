package whale.workflows;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.util.List;

/**
 * One WHALE run: weight phases of online RSFT alternating with Meta-Harness search phases, with
 * test mean@8 after every phase. Type name {@code WhaleWorkflow}, task queue {@code whale-control}.
 */
@WorkflowInterface
public interface WhaleWorkflow {
  String TASK_QUEUE = "whale-control";

  @WorkflowMethod
  WhaleResult run(ExperimentSpec spec);

  /** Ends the current phase at the next step (or iteration) boundary. */
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

  @QueryMethod
  WhaleStatus status();

  @QueryMethod
  List<RunEvent> history();
}
