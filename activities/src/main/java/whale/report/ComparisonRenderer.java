package whale.report;

import java.nio.charset.StandardCharsets;
import java.util.List;
import whale.workflows.activities.ReportRequest;

/**
 * Renders a comparison report: the results table (Markdown), the plot (PNG) and a self-contained
 * HTML page. Pure: no I/O, and the same request gives byte-identical output within a JVM.
 *
 * <p>Numbers: mean@k is shown in percent with two decimals, as the paper's table; best (and base)
 * mean@k as mean ± sample sd over seeds, "± —" for a single seed; rollouts (to best, in all) as the
 * mean over seeds, rounded. Schedules appear in the order they first appear among the runs; the row
 * with the highest mean is bold and marked "(best)" only when its 95 % interval over seeds clears
 * every other row's; otherwise it and the rows overlapping it say "(tied)". Under the table, the
 * reference schedule ("whale") against each other one, paired by seed ({@link PairedDifference}).
 * Two plots draw each run's best-so-far test mean@k as a step function of training rollouts and of
 * wall time, each schedule's mean of those over its seeds on the union of their x's, and its 95 %
 * interval band (two or more seeds). The wall-time plot is left out (null) when a run's evaluations
 * have no times (histories recorded before they existed).
 *
 * <p>Bad input is rejected with an {@link IllegalArgumentException} that names the run and the
 * field, never rendered: a null request, k &lt; 1, no runs, a null or blank schedule name, the same
 * (schedule, seed) twice, a NaN, infinite or out-of-[0, 1] mean@k (mean@k is a fraction here, not a
 * percentage), negative rollouts or rolloutsAtBest &gt; rollouts, an empty curve (every run has at
 * least the base evaluation), curve points out of rollout order. A null or blank title becomes
 * "WHALE comparison"; a null workflow id prints empty; curve labels are not used.
 */
public final class ComparisonRenderer {
  static final String DEFAULT_TITLE = "WHALE comparison";

  private ComparisonRenderer() {}

  /**
   * A rendered report.
   *
   * @param table the results table in Markdown, with a one-line note under it
   * @param markdown the whole report.md: title, table, plot image link ({@code plot.png}), runs
   * @param svg the plot along rollouts as inline SVG (as embedded in the HTML page)
   * @param png the plot along rollouts as PNG
   * @param wallSvg the plot along wall time as inline SVG, or null (see above)
   * @param wallPng the plot along wall time as PNG ({@code plot-wall.png}), or null
   * @param html the self-contained page, UTF-8
   */
  public record Rendered(String table, String markdown, String svg, byte[] png, String wallSvg,
      byte[] wallPng, byte[] html) {}

  public static Rendered render(ReportRequest req) {
    RequestCheck.check(req);
    String title = req.title() == null || req.title().isBlank() ? DEFAULT_TITLE : req.title();
    List<ScheduleStats> stats = ScheduleStats.of(req.runs());
    String table = MarkdownReport.table(req.k(), stats);
    PlotData plot = PlotData.of(title, req.k(), stats, PlotData.Along.ROLLOUTS);
    String svg = SvgPlot.svg(plot);
    byte[] png = PngPlot.png(plot);
    PlotData wall = PlotData.of(title, req.k(), stats, PlotData.Along.WALL);
    String wallSvg = wall == null ? null : SvgPlot.svg(wall);
    byte[] wallPng = wall == null ? null : PngPlot.png(wall);
    String html = HtmlReport.page(title, req.k(), stats, svg, png, wallSvg, wallPng);
    return new Rendered(table, MarkdownReport.report(title, req.k(), table, stats, wall != null),
        svg, png, wallSvg, wallPng, html.getBytes(StandardCharsets.UTF_8));
  }
}
