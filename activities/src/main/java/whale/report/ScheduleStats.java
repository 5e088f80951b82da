package whale.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import whale.workflows.activities.ComparisonRun;

/**
 * One row of the results table: a schedule's runs summarised over seeds. Means and sample standard
 * deviations (n − 1); the sd is NaN for a single seed, where it is undefined.
 */
public record ScheduleStats(String schedule, List<ComparisonRun> runs, double baseMean,
    double baseSd, double bestMean, double bestSd, double rolloutsAtBestMean,
    double rolloutsMean) {

  public int seeds() {
    return runs.size();
  }

  /** One entry per schedule, in the order the schedules first appear among the runs. */
  public static List<ScheduleStats> of(List<ComparisonRun> runs) {
    Map<String, List<ComparisonRun>> bySchedule = new LinkedHashMap<>();
    for (ComparisonRun r : runs) {
      bySchedule.computeIfAbsent(r.schedule(), s -> new ArrayList<>()).add(r);
    }
    List<ScheduleStats> out = new ArrayList<>();
    bySchedule.forEach((schedule, rs) -> out.add(new ScheduleStats(schedule, List.copyOf(rs),
        mean(rs, ComparisonRun::baseMeanAtK), sd(rs, ComparisonRun::baseMeanAtK),
        mean(rs, ComparisonRun::bestMeanAtK), sd(rs, ComparisonRun::bestMeanAtK),
        mean(rs, r -> r.rolloutsAtBest()), mean(rs, r -> r.rollouts()))));
    return out;
  }

  static double mean(List<ComparisonRun> rs, ToDoubleFunction<ComparisonRun> f) {
    double sum = 0;
    for (ComparisonRun r : rs) {
      sum += f.applyAsDouble(r);
    }
    return sum / rs.size();
  }

  static double sd(List<ComparisonRun> rs, ToDoubleFunction<ComparisonRun> f) {
    if (rs.size() < 2) {
      return Double.NaN;
    }
    double m = mean(rs, f);
    double ss = 0;
    for (ComparisonRun r : rs) {
      double d = f.applyAsDouble(r) - m;
      ss += d * d;
    }
    return Math.sqrt(ss / (rs.size() - 1));
  }
}
