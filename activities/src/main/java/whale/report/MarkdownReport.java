package whale.report;

import java.util.List;
import whale.workflows.activities.ComparisonRun;

/** The results table, and the whole report.md around it. */
final class MarkdownReport {
  private MarkdownReport() {}

  static String table(int k, List<ScheduleStats> stats) {
    StringBuilder b = new StringBuilder();
    b.append("| schedule | seeds | base mean@").append(k).append(" (%) | best mean@").append(k)
        .append(" (%) | rollouts to best | rollouts |\n");
    b.append("|---|---:|---:|---:|---:|---:|\n");
    List<ScheduleStats.Mark> marks = ScheduleStats.marks(stats);
    for (int i = 0; i < stats.size(); i++) {
      ScheduleStats s = stats.get(i);
      ScheduleStats.Mark mark = marks.get(i);
      String name = Text.markdown(s.schedule());
      String best = Text.interval(s.best());
      b.append("| ").append(switch (mark) {
        case BEST -> "**" + name + "** (best)";
        case TIED -> name + " (tied)";
        case NONE -> name;
      })
          .append(" | ").append(s.seeds())
          .append(" | ").append(Text.interval(s.base()))
          .append(" | ").append(mark == ScheduleStats.Mark.BEST ? "**" + best + "**" : best)
          .append(" | ").append(Text.count(s.rolloutsAtBestMean()))
          .append(" | ").append(Text.count(s.rolloutsMean())).append(" |\n");
    }
    b.append('\n').append(note(k)).append('\n');
    List<PairedDifference> paired = PairedDifference.of(stats);
    if (!paired.isEmpty()) {
      b.append('\n').append(pairedTitle(k)).append("\n\n");
      for (PairedDifference p : paired) {
        b.append("- ").append(p.sentence(Text::markdown)).append('\n');
      }
    }
    return b.toString();
  }

  static String note(int k) {
    return "mean@" + k + " in percent: mean over seeds [95 % Student-t interval over seeds; — for"
        + " one seed]; rollouts: training rollouts (weight steps and harness iterations; test"
        + " evaluation not counted), mean over seeds; rollouts to best: spent when a run first"
        + " reached its best. (best): the highest mean, its interval clear of every other row's;"
        + " (tied): the highest mean and every row whose interval overlaps it.";
  }

  static String pairedTitle(int k) {
    return "Paired by seed (best mean@" + k + " difference in points, 95 % Student-t interval over"
        + " the common seeds):";
  }

  static String report(String title, int k, String table, List<ScheduleStats> stats,
      boolean wall) {
    StringBuilder b = new StringBuilder();
    b.append("# ").append(Text.markdown(title)).append("\n\n").append(table).append('\n');
    b.append("![test mean@").append(k).append(" against training rollouts](plot.png)\n\n");
    b.append('*').append(PlotData.caption(k, PlotData.Along.ROLLOUTS)).append("*\n\n");
    if (wall) {
      b.append("![test mean@").append(k).append(" against wall time](plot-wall.png)\n\n");
      b.append('*').append(PlotData.caption(k, PlotData.Along.WALL)).append("*\n\n");
    }
    b.append("## Runs\n\n");
    b.append("| schedule | seed | workflow | base mean@").append(k).append(" (%) | best mean@")
        .append(k).append(" (%) | rollouts to best | rollouts | evaluations |\n");
    b.append("|---|---:|---|---:|---:|---:|---:|---:|\n");
    for (ScheduleStats s : stats) {
      for (ComparisonRun r : s.runs()) {
        b.append("| ").append(Text.markdown(r.schedule())).append(" | ").append(r.seed())
            .append(" | ").append(r.workflowId() == null ? "" : Text.markdown(r.workflowId()))
            .append(" | ").append(Text.pct(r.baseMeanAtK()))
            .append(" | ").append(Text.pct(r.bestMeanAtK()))
            .append(" | ").append(r.rolloutsAtBest())
            .append(" | ").append(r.rollouts())
            .append(" | ").append(r.curve().size()).append(" |\n");
      }
    }
    return b.toString();
  }
}
