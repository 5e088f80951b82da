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
    double top = best(stats);
    for (ScheduleStats s : stats) {
      boolean isBest = s.bestMean() == top;
      String best = Text.meanSd(s.bestMean(), s.bestSd());
      b.append("| ").append(isBest ? "**" + Text.markdown(s.schedule()) + "** (best)"
              : Text.markdown(s.schedule()))
          .append(" | ").append(s.seeds())
          .append(" | ").append(Text.meanSd(s.baseMean(), s.baseSd()))
          .append(" | ").append(isBest ? "**" + best + "**" : best)
          .append(" | ").append(Text.count(s.rolloutsAtBestMean()))
          .append(" | ").append(Text.count(s.rolloutsMean())).append(" |\n");
    }
    b.append('\n').append(note(k)).append('\n');
    return b.toString();
  }

  static String note(int k) {
    return "mean@" + k + " in percent, mean ± sample sd over seeds (± — : one seed, sd undefined);"
        + " rollouts: training rollouts (weight steps and harness iterations; test evaluation not"
        + " counted), mean over seeds; rollouts to best: spent when a run first reached its best."
        + " Best row: highest mean best mean@" + k + ".";
  }

  static double best(List<ScheduleStats> stats) {
    return stats.stream().mapToDouble(ScheduleStats::bestMean).max().orElse(Double.NaN);
  }

  static String report(String title, int k, String table, List<ScheduleStats> stats) {
    StringBuilder b = new StringBuilder();
    b.append("# ").append(Text.markdown(title)).append("\n\n").append(table).append('\n');
    b.append("![test mean@").append(k).append(" against training rollouts](plot.png)\n\n");
    b.append('*').append(PlotData.caption(k)).append("*\n\n");
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
