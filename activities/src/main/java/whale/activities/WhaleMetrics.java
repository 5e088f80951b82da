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

  private WhaleMetrics() {}

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
