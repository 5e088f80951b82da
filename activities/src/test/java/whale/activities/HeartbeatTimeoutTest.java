package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.temporal.activity.Activity;
import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Against a Temporal server's own heartbeat timeout: an attempt that computes for four heartbeat
 * timeouts without a checkpoint completes in its first attempt, because its ticker keeps it alive.
 */
class HeartbeatTimeoutTest {
  static final Duration TIMEOUT = Duration.ofSeconds(2);
  static final Duration TICK = Duration.ofMillis(400);

  @ActivityInterface
  public interface Compute {
    /** Spins for {@code millis} with no checkpoint; returns the attempt that finished. */
    @ActivityMethod
    int spin(long millis);
  }

  public static class ComputeImpl implements Compute {
    @Override
    public int spin(long millis) {
      try (ActivityHeartbeat hb = ActivityHeartbeat.start("spinning", TICK)) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long x = 0;
        while (System.nanoTime() < end) {
          x += Long.numberOfTrailingZeros(x + 1);
        }
        return Activity.getExecutionContext().getInfo().getAttempt() + (int) (x & 0);
      }
    }
  }

  @WorkflowInterface
  public interface Caller {
    @WorkflowMethod
    int call(long millis);
  }

  public static class CallerImpl implements Caller {
    @Override
    public int call(long millis) {
      return Workflow.newActivityStub(Compute.class, ActivityOptions.newBuilder()
          .setStartToCloseTimeout(Duration.ofMinutes(1))
          .setHeartbeatTimeout(TIMEOUT)
          .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(3)
              .setInitialInterval(Duration.ofMillis(100)).build())
          .build()).spin(millis);
    }
  }

  private TestWorkflowEnvironment env;

  @BeforeEach
  void start() {
    env = TestWorkflowEnvironment.newInstance(TestEnvironmentOptions.newBuilder()
        .setUseTimeskipping(false).build());
    Worker w = env.newWorker("hb", WorkerOptions.newBuilder()
        .setMaxHeartbeatThrottleInterval(TICK) // as WhaleWorkers does with ActivityHeartbeat.TICK
        .build());
    w.registerWorkflowImplementationTypes(CallerImpl.class);
    w.registerActivitiesImplementations(new ComputeImpl());
    env.start();
  }

  @AfterEach
  void stop() {
    env.close();
  }

  @Test
  void aLiveAttemptWithoutCheckpointsIsNotTimedOut() {
    Caller c = env.getWorkflowClient().newWorkflowStub(Caller.class,
        io.temporal.client.WorkflowOptions.newBuilder().setTaskQueue("hb").build());
    assertEquals(1, c.call(4 * TIMEOUT.toMillis()), "the attempt that completed");
  }
}
