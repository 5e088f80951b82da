package whale.report;

/**
 * A mean over seeds with its two-sided 95 % Student-t interval: mean ± t(0.975, n−1) · sd / √n.
 *
 * <p>Why t and not a bootstrap: with the handful of seeds a comparison affords (2 to 5), the
 * percentile bootstrap resamples n values and so behaves like mean ± 1.96 · sd·√((n−1)/n) / √n,
 * which at n = 5 is 0.63x the t interval's width (t(0.975, 4) = 2.776) and covers the true mean far
 * less than 95 % of the time. The t interval assumes roughly normal per-seed values; it is exact
 * for them and widens honestly as seeds get fewer. With one seed there is no interval (lo and hi
 * are NaN): one run says nothing about seed-to-seed spread.
 */
public record Interval(double mean, double lo, double hi, int n) {

  /** The interval of {@code values} (at least one). */
  public static Interval of(double[] values) {
    int n = values.length;
    if (n == 0) {
      throw new IllegalArgumentException("an interval needs at least one value");
    }
    double sum = 0;
    for (double v : values) {
      sum += v;
    }
    double mean = sum / n;
    if (n == 1) {
      return new Interval(mean, Double.NaN, Double.NaN, 1);
    }
    double ss = 0;
    for (double v : values) {
      ss += (v - mean) * (v - mean);
    }
    double half = t975(n - 1) * Math.sqrt(ss / (n - 1) / n);
    return new Interval(mean, mean - half, mean + half, n);
  }

  public boolean defined() {
    return !Double.isNaN(lo);
  }

  /** Whether the two intervals share a point; an undefined interval overlaps everything. */
  public boolean overlaps(Interval other) {
    return !defined() || !other.defined() || (lo <= other.hi && other.lo <= hi);
  }

  /** Whether the interval lies wholly above (1), wholly below (−1) zero, or covers it (0). */
  public int sign() {
    if (!defined()) {
      return 0;
    }
    return lo > 0 ? 1 : hi < 0 ? -1 : 0;
  }

  /** Table of t(0.975, df) for df 1..30 (to 4 decimals); beyond, the Cornish-Fisher expansion. */
  private static final double[] T975 = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};

  /** The 97.5 % quantile of Student's t with {@code df} degrees of freedom. */
  static double t975(int df) {
    if (df < 1) {
      throw new IllegalArgumentException("degrees of freedom must be at least 1, got " + df);
    }
    if (df <= T975.length) {
      return T975[df - 1];
    }
    double z = 1.959964;
    double z3 = z * z * z;
    double z5 = z3 * z * z;
    double z7 = z5 * z * z;
    return z + (z3 + z) / (4.0 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96.0 * df * df)
        + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384.0 * df * df * df);
  }
}
