package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;
import io.temporal.activity.ActivityOptions;
import io.temporal.testing.TestActivityEnvironment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The ticker against the SDK's test activity environment: liveness, not checkpoints, heartbeats. */
class ActivityHeartbeatTest {
  private static final Duration TICK = Duration.ofMillis(100);

  @ActivityInterface
  public interface Busy {
    /** Computes for {@code millis} without reaching a single checkpoint. */
    @ActivityMethod
    long computeWithoutCheckpoints(long millis);

    /** Computes with a checkpoint per round until the attempt is abandoned; returns nothing. */
    @ActivityMethod
    long computeUntilAbandoned();
  }

  /** The last moment the abandoned computation ran, and when it was abandoned. */
  static final AtomicLong lastRound = new AtomicLong();

  public static class BusyImpl implements Busy {
    @Override
    public long computeWithoutCheckpoints(long millis) {
      try (ActivityHeartbeat hb = ActivityHeartbeat.start("spinning", TICK)) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long x = 0;
        while (System.nanoTime() < end) {
          x += Long.numberOfTrailingZeros(x + 1); // pure CPU: no checkpoint, no blocking call
        }
        return x;
      }
    }

    @Override
    public long computeUntilAbandoned() {
      try (ActivityHeartbeat hb = ActivityHeartbeat.start("round 0", TICK)) {
        for (long round = 1; ; round++) {
          long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5);
          while (System.nanoTime() < end) {
            Thread.onSpinWait();
          }
          lastRound.set(System.nanoTime());
          ActivityHeartbeat.progress("round " + round);
        }
      }
    }
  }

  private TestActivityEnvironment env;
  private final List<String> beats = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(new BusyImpl());
    env.setActivityHeartbeatListener(String.class, beats::add);
  }

  @AfterEach
  void tearDown() {
    env.close();
  }

  private Busy stub() {
    // a 500 ms heartbeat timeout: the SDK sends at most every 400 ms
    return env.newActivityStub(Busy.class, ActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofMinutes(1))
        .setHeartbeatTimeout(Duration.ofMillis(500))
        .build());
  }

  @Test
  void aComputeThreadThatReachesNoCheckpointStillHeartbeats() {
    stub().computeWithoutCheckpoints(2_000);
    // 2 s at one send per 400 ms: about 5; before the ticker, checkpoints sent 0 here
    assertTrue(beats.size() >= 3, "heartbeats sent while computing: " + beats);
    assertTrue(beats.stream().allMatch("spinning"::equals), beats.toString());
  }

  @Test
  void anAbandonedAttemptStopsComputingAtItsNextCheckpoint() throws Exception {
    Busy busy = stub();
    CompletableFuture<Long> run = CompletableFuture.supplyAsync(busy::computeUntilAbandoned);
    Thread.sleep(500);
    assertFalse(run.isDone(), "still computing before the server refuses a heartbeat");
    long abandonedAt = System.nanoTime();
    env.requestCancelActivity(); // the next heartbeat's reply says cancelled, as a timed-out one says NOT_FOUND
    ExecutionException e = assertThrows(ExecutionException.class, () -> run.get(10, TimeUnit.SECONDS));
    long stoppedAfterMs = TimeUnit.NANOSECONDS.toMillis(lastRound.get() - abandonedAt);
    // at most a throttle interval (400 ms) for the reply and a tick (100 ms) for the ticker to see it
    assertTrue(stoppedAfterMs < 2_000, "computed " + stoppedAfterMs + " ms after abandonment; " + e);
    long lastSeen = lastRound.get();
    Thread.sleep(300);
    assertEquals(lastSeen, lastRound.get(), "the abandoned computation is no longer running");
  }

  @Test
  void outsideAnActivityNothingTicksAndCheckpointsNeverThrow() {
    try (ActivityHeartbeat hb = ActivityHeartbeat.start("unit test")) {
      ActivityHeartbeat.progress("step 1");
      hb.checkpoint();
      assertFalse(hb.abandoned());
    }
  }

  /** Every attempt, finished or failed, gives the native memory its tensors freed back (glibc). */
  @Test
  void everyAttemptEndsByTrimmingTheMallocHeaps() {
    org.junit.jupiter.api.Assumptions.assumeTrue(whale.model.NativeHeap.glibc(), "glibc only");
    long before = whale.model.NativeHeap.trims();
    assertEquals(7, ActivityHeartbeat.during("done", () -> 7));
    assertEquals(before + 1, whale.model.NativeHeap.trims());
    assertThrows(IllegalStateException.class, () -> ActivityHeartbeat.during("failed", () -> {
      throw new IllegalStateException("the work failed");
    }));
    assertEquals(before + 2, whale.model.NativeHeap.trims());
  }
}
