package whale.report;

import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.function.ToLongFunction;
import whale.workflows.activities.CurvePoint;

/**
 * A step function of training rollouts: y holds from x[i] up to x[i+1], and after the last x.
 * Values are fractions (mean@k), as in the runs.
 */
record Curve(long[] x, double[] y) {

  /** A run's best test mean@k so far after each evaluation, along rollouts. */
  static Curve bestSoFar(List<CurvePoint> points) {
    return bestSoFar(points, CurvePoint::rollouts);
  }

  /** A run's best test mean@k so far after each evaluation (one point per distinct x). */
  static Curve bestSoFar(List<CurvePoint> points, ToLongFunction<CurvePoint> xOf) {
    long[] xs = new long[points.size()];
    double[] ys = new double[points.size()];
    int n = 0;
    double best = Double.NEGATIVE_INFINITY;
    for (CurvePoint p : points) {
      best = Math.max(best, p.meanAtK());
      long x = xOf.applyAsLong(p);
      if (n > 0 && xs[n - 1] == x) {
        ys[n - 1] = best; // several evaluations at one rollout count: the step ends at the last
      } else {
        xs[n] = x;
        ys[n] = best;
        n++;
      }
    }
    return new Curve(Arrays.copyOf(xs, n), Arrays.copyOf(ys, n));
  }

  /**
   * The mean over seeds of their step functions, sampled on the union of their x's. It starts where
   * every seed has a value (normally 0 rollouts, the base evaluation) and carries a seed that
   * finished early at its last value up to the schedule's largest x.
   */
  static Curve mean(List<Curve> seeds) {
    return band(seeds)[0];
  }

  /**
   * {mean, lo, hi}: the {@link #mean} and, at each of its x's, the 95 % {@link Interval} of the
   * seeds' values there, clamped to [0, 1]; lo and hi are null for a single seed.
   */
  static Curve[] band(List<Curve> seeds) {
    long start = Long.MIN_VALUE;
    TreeSet<Long> union = new TreeSet<>();
    for (Curve c : seeds) {
      start = Math.max(start, c.x[0]);
      for (long v : c.x) {
        union.add(v);
      }
    }
    long[] xs = union.tailSet(start, true).stream().mapToLong(Long::longValue).toArray();
    double[] mean = new double[xs.length];
    double[] lo = new double[xs.length];
    double[] hi = new double[xs.length];
    double[] at = new double[seeds.size()];
    for (int i = 0; i < xs.length; i++) {
      for (int j = 0; j < at.length; j++) {
        at[j] = seeds.get(j).at(xs[i]);
      }
      Interval iv = Interval.of(at);
      mean[i] = iv.mean();
      lo[i] = Math.max(0, iv.lo());
      hi[i] = Math.min(1, iv.hi());
    }
    boolean one = seeds.size() < 2;
    return new Curve[] {new Curve(xs, mean), one ? null : new Curve(xs, lo),
        one ? null : new Curve(xs, hi)};
  }

  /**
   * The band between two step functions on the same x's as one closed polygon: along the upper
   * curve's steps, then back along the lower's. {xs, ys}.
   */
  static double[][] polygon(Curve lower, Curve upper) {
    double[][] up = upper.polyline();
    double[][] down = lower.polyline();
    int n = up[0].length;
    double[] px = new double[2 * n];
    double[] py = new double[2 * n];
    for (int i = 0; i < n; i++) {
      px[i] = up[0][i];
      py[i] = up[1][i];
      px[2 * n - 1 - i] = down[0][i];
      py[2 * n - 1 - i] = down[1][i];
    }
    return new double[][] {px, py};
  }

  /** The value at {@code at}: the last point's at or before it (callers stay at or after x[0]). */
  double at(long at) {
    int i = Arrays.binarySearch(x, at);
    return y[i >= 0 ? i : Math.max(0, -i - 2)];
  }

  long lastX() {
    return x[x.length - 1];
  }

  double maxY() {
    return Arrays.stream(y).max().orElse(0);
  }

  /** The polyline that draws the step function: horizontal to the next x, then vertical. */
  double[][] polyline() {
    int n = x.length;
    double[] px = new double[2 * n - 1];
    double[] py = new double[2 * n - 1];
    for (int i = 0; i < n; i++) {
      px[2 * i] = x[i];
      py[2 * i] = y[i];
      if (i + 1 < n) {
        px[2 * i + 1] = x[i + 1];
        py[2 * i + 1] = y[i];
      }
    }
    return new double[][] {px, py};
  }
}
