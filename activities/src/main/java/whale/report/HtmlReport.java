package whale.report;

import java.util.Base64;
import java.util.List;
import whale.workflows.activities.ComparisonRun;

/**
 * A single self-contained page: the results table, the plot as inline SVG, the same plot as a PNG
 * data URI (for copying into slides), the runs. No scripts, no external fonts, images or styles;
 * every user-written string (title, schedule names, workflow ids) is escaped.
 */
final class HtmlReport {
  private static final String STYLE = "body{font-family:sans-serif;margin:2em;color:#222}"
      + "table{border-collapse:collapse;margin:1em 0}"
      + "th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}"
      + "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
      + "tr.best{font-weight:bold;background:#eef4fb}"
      + ".note{color:#555;font-size:90%;max-width:60em}"
      + "svg,img{max-width:100%;height:auto}";

  private HtmlReport() {}

  static String page(String title, int k, List<ScheduleStats> stats, String svg, byte[] png,
      String wallSvg, byte[] wallPng) {
    StringBuilder b = new StringBuilder();
    String t = Text.html(title);
    b.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<title>").append(t).append("</title>\n<style>").append(STYLE)
        .append("</style>\n</head>\n<body>\n<h1>").append(t).append("</h1>\n");
    results(b, k, stats);
    b.append("<p class=\"note\">").append(Text.html(MarkdownReport.note(k))).append("</p>\n");
    paired(b, k, stats);
    figure(b, k, svg, png, PlotData.Along.ROLLOUTS);
    if (wallSvg != null) {
      figure(b, k, wallSvg, wallPng, PlotData.Along.WALL);
    }
    runs(b, k, stats);
    b.append("</body>\n</html>\n");
    return b.toString();
  }

  private static void results(StringBuilder b, int k, List<ScheduleStats> stats) {
    b.append("<table class=\"results\">\n<thead><tr><th>schedule</th><th class=\"num\">seeds</th>")
        .append("<th class=\"num\">base mean@").append(k).append(" (%)</th>")
        .append("<th class=\"num\">best mean@").append(k).append(" (%)</th>")
        .append("<th class=\"num\">rollouts to best</th><th class=\"num\">rollouts</th></tr>")
        .append("</thead>\n<tbody>\n");
    List<ScheduleStats.Mark> marks = ScheduleStats.marks(stats);
    for (int i = 0; i < stats.size(); i++) {
      ScheduleStats s = stats.get(i);
      ScheduleStats.Mark mark = marks.get(i);
      b.append(mark == ScheduleStats.Mark.BEST ? "<tr class=\"best\">" : "<tr>")
          .append("<td>").append(Text.html(s.schedule())).append(switch (mark) {
            case BEST -> " (best)";
            case TIED -> " (tied)";
            case NONE -> "";
          }).append("</td>");
      num(b, Integer.toString(s.seeds()));
      num(b, Text.interval(s.base()));
      num(b, Text.interval(s.best()));
      num(b, Text.count(s.rolloutsAtBestMean()));
      num(b, Text.count(s.rolloutsMean()));
      b.append("</tr>\n");
    }
    b.append("</tbody>\n</table>\n");
  }

  private static void figure(StringBuilder b, int k, String svg, byte[] png,
      PlotData.Along along) {
    b.append("<figure>\n").append(svg).append("<figcaption class=\"note\">")
        .append(Text.html(PlotData.caption(k, along))).append("</figcaption>\n</figure>\n");
    b.append("<details><summary>The plot as PNG</summary>\n<img alt=\"")
        .append(Text.html("test mean@" + k + " against " + along.title)).append("\" width=\"")
        .append(SvgPlot.WIDTH).append("\" height=\"").append(SvgPlot.HEIGHT)
        .append("\" src=\"data:image/png;base64,").append(Base64.getEncoder().encodeToString(png))
        .append("\">\n</details>\n");
  }

  private static void paired(StringBuilder b, int k, List<ScheduleStats> stats) {
    List<PairedDifference> paired = PairedDifference.of(stats);
    if (paired.isEmpty()) {
      return;
    }
    b.append("<p>").append(Text.html(MarkdownReport.pairedTitle(k)))
        .append("</p>\n<ul class=\"paired\">\n");
    for (PairedDifference p : paired) {
      b.append("<li>").append(p.sentence(Text::html)).append("</li>\n");
    }
    b.append("</ul>\n");
  }

  private static void runs(StringBuilder b, int k, List<ScheduleStats> stats) {
    b.append("<h2>Runs</h2>\n<table class=\"runs\">\n<thead><tr><th>schedule</th>")
        .append("<th class=\"num\">seed</th><th>workflow</th>")
        .append("<th class=\"num\">base mean@").append(k).append(" (%)</th>")
        .append("<th class=\"num\">best mean@").append(k).append(" (%)</th>")
        .append("<th class=\"num\">rollouts to best</th><th class=\"num\">rollouts</th>")
        .append("<th class=\"num\">evaluations</th></tr></thead>\n<tbody>\n");
    for (ScheduleStats s : stats) {
      for (ComparisonRun r : s.runs()) {
        b.append("<tr><td>").append(Text.html(r.schedule())).append("</td>");
        num(b, Long.toString(r.seed()));
        b.append("<td>").append(r.workflowId() == null ? "" : Text.html(r.workflowId()))
            .append("</td>");
        num(b, Text.pct(r.baseMeanAtK()));
        num(b, Text.pct(r.bestMeanAtK()));
        num(b, Long.toString(r.rolloutsAtBest()));
        num(b, Long.toString(r.rollouts()));
        num(b, Integer.toString(r.curve().size()));
        b.append("</tr>\n");
      }
    }
    b.append("</tbody>\n</table>\n");
  }

  private static void num(StringBuilder b, String v) {
    b.append("<td class=\"num\">").append(Text.html(v)).append("</td>");
  }
}
