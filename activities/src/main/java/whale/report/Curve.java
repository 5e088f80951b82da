package whale.report;

import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import whale.workflows.activities.CurvePoint;

/**
 * A step function of training rollouts: y holds from x[i] up to x[i+1], and after the last x.
 * Values are fractions (mean@k), as in the runs.
 */
record Curve(long[] x, double[] y) {

  /** A run's best test mean@k so far after each evaluation (one point per distinct x). */
  static Curve bestSoFar(List<CurvePoint> points) {
    long[] xs = new long[points.size()];
    double[] ys = new double[points.size()];
    int n = 0;
    double best = Double.NEGATIVE_INFINITY;
    for (CurvePoint p : points) {
      best = Math.max(best, p.meanAtK());
      if (n > 0 && xs[n - 1] == p.rollouts()) {
        ys[n - 1] = best; // several evaluations at one rollout count: the step ends at the last
      } else {
        xs[n] = p.rollouts();
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
    long start = Long.MIN_VALUE;
    TreeSet<Long> union = new TreeSet<>();
    for (Curve c : seeds) {
      start = Math.max(start, c.x[0]);
      for (long v : c.x) {
        union.add(v);
      }
    }
    long[] xs = union.tailSet(start, true).stream().mapToLong(Long::longValue).toArray();
    double[] ys = new double[xs.length];
    for (int i = 0; i < xs.length; i++) {
      double sum = 0;
      for (Curve c : seeds) {
        sum += c.at(xs[i]);
      }
      ys[i] = sum / seeds.size();
    }
    return new Curve(xs, ys);
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
