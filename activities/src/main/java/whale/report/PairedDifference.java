package whale.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import whale.workflows.Schedule;
import whale.workflows.activities.ComparisonRun;

/**
 * The reference schedule against one baseline, paired by seed: per common seed the reference's best
 * test mean@k minus the baseline's, and the {@link Interval} of those differences. Pairing removes
 * what a seed does to both runs alike (its data split, its base evaluation, its first RSFT steps
 * where the schedules share them), so it separates schedules that unpaired intervals cannot.
 */
public record PairedDifference(String reference, String baseline, Interval difference) {

  /** The schedule the others are measured against: "whale" when it ran, else the first one. */
  static String reference(List<ScheduleStats> stats) {
    return stats.stream().map(ScheduleStats::schedule).filter(Schedule.WHALE.json()::equals)
        .findFirst().orElse(stats.get(0).schedule());
  }

  /** The reference against every other schedule, in table order; none with one schedule. */
  static List<PairedDifference> of(List<ScheduleStats> stats) {
    String ref = reference(stats);
    Map<Long, Double> refBest = new HashMap<>();
    stats.stream().filter(s -> s.schedule().equals(ref)).findFirst().orElseThrow().runs()
        .forEach(r -> refBest.put(r.seed(), r.bestMeanAtK()));
    List<PairedDifference> out = new ArrayList<>();
    for (ScheduleStats s : stats) {
      if (s.schedule().equals(ref)) {
        continue;
      }
      List<Double> d = new ArrayList<>();
      for (ComparisonRun r : s.runs()) {
        Double mine = refBest.get(r.seed());
        if (mine != null) {
          d.add(mine - r.bestMeanAtK());
        }
      }
      out.add(new PairedDifference(ref, s.schedule(), d.isEmpty() ? null
          : Interval.of(d.stream().mapToDouble(Double::doubleValue).toArray())));
    }
    return out;
  }

  /**
   * One plain sentence: who is ahead by how much, or that the seeds show no difference; schedule
   * names pass through {@code name} (the Markdown or HTML escaping), the rest is whale's own text.
   */
  String sentence(UnaryOperator<String> name) {
    String reference = name.apply(this.reference);
    String baseline = name.apply(this.baseline);
    if (difference == null) {
      return reference + " and " + baseline + " share no seed: no paired comparison";
    }
    Interval d = difference;
    String seeds = d.n() + (d.n() == 1 ? " seed" : " seeds");
    String range = d.defined() ? " [" + Text.pct(d.lo()) + ", " + Text.pct(d.hi()) + "]" : "";
    return switch (d.sign()) {
      case 1 -> reference + " ahead of " + baseline + " by " + Text.pct(d.mean()) + " points"
          + range + " over " + seeds;
      case -1 -> reference + " behind " + baseline + " by " + Text.pct(-d.mean()) + " points ["
          + Text.pct(-d.hi()) + ", " + Text.pct(-d.lo()) + "] over " + seeds;
      default -> reference + " against " + baseline + ": no difference shown with " + seeds
          + " (mean difference " + signed(d.mean()) + " points" + range
          + (d.defined() ? "" : "; one seed gives no interval") + ")";
    };
  }

  private static String signed(double fraction) {
    return (fraction >= 0 ? "+" : "-") + Text.pct(Math.abs(fraction));
  }
}
