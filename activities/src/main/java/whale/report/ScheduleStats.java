package whale.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import whale.workflows.activities.ComparisonRun;

/**
 * One row of the results table: a schedule's runs summarised over seeds. Base and best test
 * mean@k as a mean with its 95 % {@link Interval} (none for a single seed); rollouts as means.
 */
public record ScheduleStats(String schedule, List<ComparisonRun> runs, Interval base,
    Interval best, double rolloutsAtBestMean, double rolloutsMean) {

  public int seeds() {
    return runs.size();
  }

  public double bestMean() {
    return best.mean();
  }

  /** One entry per schedule, in the order the schedules first appear among the runs. */
  public static List<ScheduleStats> of(List<ComparisonRun> runs) {
    Map<String, List<ComparisonRun>> bySchedule = new LinkedHashMap<>();
    for (ComparisonRun r : runs) {
      bySchedule.computeIfAbsent(r.schedule(), s -> new ArrayList<>()).add(r);
    }
    List<ScheduleStats> out = new ArrayList<>();
    bySchedule.forEach((schedule, rs) -> out.add(new ScheduleStats(schedule, List.copyOf(rs),
        interval(rs, ComparisonRun::baseMeanAtK), interval(rs, ComparisonRun::bestMeanAtK),
        interval(rs, r -> r.rolloutsAtBest()).mean(), interval(rs, r -> r.rollouts()).mean())));
    return out;
  }

  /**
   * Which rows the table marks: {@code best} when the top row's interval clears every other row's,
   * else {@code tied} for the top row and every row whose interval overlaps the top's (one seed
   * has no interval, so it overlaps everything), {@code none} for the rest.
   */
  enum Mark { BEST, TIED, NONE }

  static List<Mark> marks(List<ScheduleStats> stats) {
    ScheduleStats top = stats.get(0);
    for (ScheduleStats s : stats) {
      if (s.bestMean() > top.bestMean()) {
        top = s;
      }
    }
    boolean alone = true;
    for (ScheduleStats s : stats) {
      if (s != top && s.best().overlaps(top.best())) {
        alone = false;
      }
    }
    List<Mark> out = new ArrayList<>();
    for (ScheduleStats s : stats) {
      if (s == top) {
        out.add(alone ? Mark.BEST : Mark.TIED);
      } else {
        out.add(!alone && s.best().overlaps(top.best()) ? Mark.TIED : Mark.NONE);
      }
    }
    return out;
  }

  private static Interval interval(List<ComparisonRun> rs, ToDoubleFunction<ComparisonRun> f) {
    return Interval.of(rs.stream().mapToDouble(f).toArray());
  }
}
