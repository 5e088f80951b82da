package whale.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How the benchmarks in bench/ report a repeated measurement: its median and its spread, since
 * absolute times on shared machines move from run to run (bench/README.md).
 */
public final class Spread {
  private Spread() {}

  public static double median(List<Double> xs) {
    return quantile(xs, 0.5);
  }

  /** The q-quantile, interpolating between the two middle values for the median of an even count. */
  public static double quantile(List<Double> xs, double q) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    int n = s.size();
    if (n == 0) {
      return Double.NaN;
    }
    if (q == 0.5) {
      return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }
    return s.get((int) Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1)));
  }

  /** {@code median (min-max, n=N)}, each number in {@code format} (for example "%.3f"). */
  public static String of(List<Double> xs, String format) {
    if (xs.isEmpty()) {
      return "none";
    }
    return String.format(Locale.ROOT, format + " (" + format + "-" + format + ", n=%d)", median(xs),
        xs.stream().mapToDouble(d -> d).min().getAsDouble(),
        xs.stream().mapToDouble(d -> d).max().getAsDouble(), xs.size());
  }
}
