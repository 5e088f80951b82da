package whale.activities;

import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.client.ActivityCompletionException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import whale.model.NativeHeap;

/**
 * Heartbeats for one activity attempt from a ticker of its own, so that the server sees the attempt
 * alive while it is alive, however slowly its compute thread reaches a checkpoint (a busy machine, a
 * wait for a sandbox or a model lock). A kill -9 stops the ticker with the process, so a dead worker
 * is still noticed within the heartbeat timeout.
 *
 * <p>The compute thread only updates the details ({@link #progress}); when a heartbeat is refused
 * (the server already timed the attempt out: NOT_FOUND, or the SDK's own local timeout; cancelled;
 * worker shutdown) the attempt is abandoned: the compute thread is interrupted and its next
 * checkpoint throws, so no abandoned attempt keeps computing beside its retry.
 */
public final class ActivityHeartbeat implements AutoCloseable {
  /**
   * How often the ticker heartbeats; activity workers cap the SDK's throttle at this too (else it
   * sends only every 0.8 x the 20 s heartbeat timeout, 4 s of slack on a loaded server).
   */
  public static final Duration TICK = Duration.ofSeconds(4);

  private static final ThreadLocal<ActivityHeartbeat> CURRENT = new ThreadLocal<>();

  private final ActivityExecutionContext ctx;
  private final Thread compute;
  private final ScheduledExecutorService ticker;
  private volatile String details;
  private volatile ActivityCompletionException abandoned;
  private boolean closed; // guarded by this: no interrupt may reach the thread after close

  private ActivityHeartbeat(ActivityExecutionContext ctx, String details, Duration tick) {
    this.ctx = ctx;
    this.compute = Thread.currentThread();
    this.details = details;
    if (ctx == null) {
      ticker = null;
      return;
    }
    String name = "whale-heartbeat-" + ctx.getInfo().getActivityType() + "-"
        + ctx.getInfo().getActivityId();
    ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    ticker.scheduleWithFixedDelay(this::tick, 0, tick.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Starts heartbeating for the calling thread's activity attempt; outside an activity (unit tests,
   * benchmarks) nothing ticks and checkpoints never throw.
   */
  public static ActivityHeartbeat start(String details) {
    return start(details, TICK);
  }

  static ActivityHeartbeat start(String details, Duration tick) {
    ActivityHeartbeat hb = new ActivityHeartbeat(activityContext(), details, tick);
    CURRENT.set(hb);
    return hb;
  }

  /**
   * Runs one attempt's work under a ticker; if the attempt is abandoned, it ends with the refusal
   * (whatever the interrupted work threw instead), and nothing is memoized. Either way it ends with
   * {@link NativeHeap#trim}.
   */
  public static <T> T during(String details, Supplier<T> work) {
    try (ActivityHeartbeat hb = start(details)) {
      try {
        return work.get();
      } catch (RuntimeException e) {
        hb.checkpoint();
        throw e;
      } finally {
        // what the attempt's tensors freed goes back to the system before the next attempt runs
        NativeHeap.trim();
      }
    }
  }

  /**
   * A checkpoint of the calling thread's attempt: records what it is doing (sent with the next
   * tick) and throws when the attempt has been abandoned. Outside {@link #start} it heartbeats
   * directly, as before.
   */
  public static void progress(String details) {
    ActivityHeartbeat hb = CURRENT.get();
    if (hb != null) {
      hb.details = details;
      hb.checkpoint();
      return;
    }
    ActivityExecutionContext ctx = activityContext();
    if (ctx != null) {
      ctx.heartbeat(details);
    }
  }

  /** Throws the refusal that abandoned this attempt, if one did (from the compute thread). */
  public void checkpoint() {
    ActivityCompletionException e = abandoned;
    if (e != null) {
      throw e;
    }
  }

  /** Whether the server refused a heartbeat of this attempt. */
  public boolean abandoned() {
    return abandoned != null;
  }

  private void tick() {
    if (abandoned != null) {
      return;
    }
    try {
      ctx.heartbeat(details);
    } catch (ActivityCompletionException e) {
      synchronized (this) {
        abandoned = e;
        if (!closed) {
          compute.interrupt(); // wakes waits (sandbox results, the pool); checkpoints do the rest
        }
      }
      ticker.shutdown();
    } catch (RuntimeException e) {
      // a transport error: the SDK retries the send itself; keep ticking
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    if (ticker != null) {
      ticker.shutdown(); // not shutdownNow: an interrupted send would only log a warning
    }
    if (CURRENT.get() == this) {
      CURRENT.remove();
    }
    if (abandoned != null) {
      Thread.interrupted(); // the SDK reuses this thread for later attempts
    }
  }

  /** The activity context, or null when called outside an activity (unit tests, benchmarks). */
  static ActivityExecutionContext activityContext() {
    try {
      return Activity.getExecutionContext();
    } catch (IllegalStateException e) {
      return null;
    }
  }
}
