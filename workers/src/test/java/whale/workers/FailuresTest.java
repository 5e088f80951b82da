package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.RetryState;
import io.temporal.client.WorkflowFailedException;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import java.io.UncheckedIOException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import whale.workflows.InvalidSpecException;

/** The last line of a failed whale command: the causes' own messages, not Temporal's wrappers. */
class FailuresTest {
  private static WorkflowFailedException failedRun(Throwable cause) {
    ActivityFailure activity = new ActivityFailure("Activity task failed", 6, 7, "RsftStep", "a-1",
        RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE, "worker@host", cause);
    return new WorkflowFailedException(WorkflowExecution.newBuilder().setWorkflowId("w").setRunId("r")
        .build(), "WhaleWorkflow", EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, 12,
        RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE, activity);
  }

  @Test
  void aFailedRunEndsWithItsCausesInOneLine() {
    // an activity's exception with its own cause, as the SDK converts them
    WorkflowFailedException e = failedRun(ApplicationFailure.newFailureWithCause(
        "cannot read artifact sha256:ab12", UncheckedIOException.class.getName(),
        ApplicationFailure.newFailure("/store/objects/ab/12: No such file", "java.io.IOException")));
    assertEquals("cannot read artifact sha256:ab12: /store/objects/ab/12: No such file",
        Failures.rootMessage(new ExecutionException(e)));
    // a message its cause repeats (a dataset line made non-retryable) is said once, on one line
    assertEquals("/d/train.jsonl:2: no answer field (one of [answer])", Failures.rootMessage(failedRun(
        ApplicationFailure.newNonRetryableFailureWithCause("/d/train.jsonl:2: no answer field (one of [answer])",
            "whale.task.Jsonl$MalformedFileException", ApplicationFailure.newFailure(
                "/d/train.jsonl:2: no answer field (one of [answer])", "whale.task.Jsonl$MalformedFileException")))));
    assertEquals("invalid experiment spec: a; b", Failures.rootMessage(failedRun(
        ApplicationFailure.newNonRetryableFailure("invalid experiment spec:\n  a;\n  b", "InvalidSpec"))));
    // errors of the command itself are printed as they are
    assertEquals("invalid experiment spec: rsft.learningRate: must be in (0.0, 1.0], got 5.0",
        Failures.rootMessage(new InvalidSpecException(java.util.List.of(
            "rsft.learningRate: must be in (0.0, 1.0], got 5.0"))));
  }
}
