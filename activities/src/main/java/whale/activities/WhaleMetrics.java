package whale.activities;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Metrics;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * whale's own metrics, on Micrometer's global registry: a worker started with {@code --metrics-port}
 * adds a Prometheus registry to it, next to the Temporal SDK's metrics.
 */
public final class WhaleMetrics {
  private static final Map<String, AtomicReference<Double>> MEAN_AT_K = new ConcurrentHashMap<>();

  private static final Map<String, java.util.concurrent.atomic.AtomicLong> MEMO =
      new ConcurrentHashMap<>();

  private WhaleMetrics() {}

  /**
   * One memoized request ({@link Memo}): "computed", "remembered" (its memo was there) or "joined"
   * (an identical request computed it in this process meanwhile).
   */
  static void memo(String kind, String outcome) {
    Metrics.counter("whale_memo", "kind", kind, "outcome", outcome).increment();
    MEMO.computeIfAbsent(kind + " " + outcome, k -> new java.util.concurrent.atomic.AtomicLong())
        .incrementAndGet();
  }

  /**
   * This process's memoized requests so far, by kind and outcome ("rsft-step computed" -> 12): what
   * a comparison's cells shared, for {@code whale compare} to print.
   */
  public static Map<String, Long> memoCounts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    MEMO.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  static void rsftStep(int rollouts, int accepted, boolean updated) {
    Metrics.counter("whale_rsft_steps", "update", updated ? "applied" : "skipped").increment();
    rollouts("weight", rollouts);
    Metrics.counter("whale_accepted_rollouts").increment(accepted);
  }

  static void rollouts(String kind, long n) {
    Metrics.counter("whale_rollouts", "kind", kind).increment(n);
  }

  /** The last mean@k measured on a split ("test" or "harness"). */
  static void meanAtK(String split, double value) {
    MEAN_AT_K.computeIfAbsent(split, s -> {
      AtomicReference<Double> ref = new AtomicReference<>(Double.NaN);
      Metrics.gauge("whale_mean_at_k", java.util.List.of(io.micrometer.core.instrument.Tag.of(
          "split", s)), ref, r -> r.get());
      return ref;
    }).set(value);
  }

  /** Episodes that ended other than normally, by status (timeout, error, turn budget, sandbox). */
  static void failedEpisode(String status) {
    Metrics.counter("whale_failed_episodes", "status", status).increment();
  }

  /** A sandbox process killed (crash, hang, limit); the pool replaces it. */
  public static Counter sandboxKills() {
    return Metrics.counter("whale_sandbox_kills");
  }
}
