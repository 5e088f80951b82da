package whale.report;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import whale.workflows.activities.ComparisonRun;
import whale.workflows.activities.CurvePoint;
import whale.workflows.activities.ReportRequest;

/** Rejects a request the report could only render wrongly, naming the run and the field. */
final class RequestCheck {
  private RequestCheck() {}

  static void check(ReportRequest req) {
    if (req == null) {
      throw new IllegalArgumentException("report request is null");
    }
    if (req.k() < 1) {
      throw new IllegalArgumentException("report: k must be at least 1, got " + req.k());
    }
    if (req.runs() == null || req.runs().isEmpty()) {
      throw new IllegalArgumentException("report: no runs to compare");
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < req.runs().size(); i++) {
      ComparisonRun r = req.runs().get(i);
      if (r == null) {
        throw new IllegalArgumentException("report: run " + i + " is null");
      }
      if (r.schedule() == null || r.schedule().isBlank()) {
        throw new IllegalArgumentException("report: run " + i + " has no schedule name");
      }
      String who = "report: run " + i + " (schedule '" + r.schedule() + "', seed " + r.seed() + ")";
      // A duplicate would count one run twice in the mean and sd.
      if (!seen.add(r.schedule() + "\n" + r.seed())) {
        throw new IllegalArgumentException(who + " appears twice");
      }
      fraction(who, "baseMeanAtK", r.baseMeanAtK());
      fraction(who, "bestMeanAtK", r.bestMeanAtK());
      if (r.rollouts() < 0 || r.rolloutsAtBest() < 0 || r.rolloutsAtBest() > r.rollouts()) {
        throw new IllegalArgumentException(who + ": need 0 <= rolloutsAtBest <= rollouts, got "
            + r.rolloutsAtBest() + " and " + r.rollouts());
      }
      curve(who, r.curve());
    }
  }

  private static void curve(String who, List<CurvePoint> curve) {
    if (curve == null || curve.isEmpty()) {
      throw new IllegalArgumentException(who + " has an empty curve (expected at least the base"
          + " model's evaluation at 0 rollouts)");
    }
    long last = 0;
    for (int j = 0; j < curve.size(); j++) {
      CurvePoint p = curve.get(j);
      if (p == null) {
        throw new IllegalArgumentException(who + ": curve point " + j + " is null");
      }
      fraction(who, "curve[" + j + "].meanAtK", p.meanAtK());
      if (p.rollouts() < last) {
        throw new IllegalArgumentException(who + ": curve point " + j + " at " + p.rollouts()
            + " rollouts comes after one at " + last + " (points must be in rollout order)");
      }
      last = p.rollouts();
    }
  }

  /** mean@k is a fraction; a value above 1 is most likely a percentage passed by mistake. */
  private static void fraction(String who, String field, double v) {
    if (!Double.isFinite(v) || v < 0 || v > 1) {
      throw new IllegalArgumentException(who + ": " + field + " must be a fraction in [0, 1], got "
          + v);
    }
  }
}
