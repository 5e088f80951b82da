package whale.report;

import java.awt.Color;
import java.util.ArrayList;
import java.util.List;

/**
 * What the PNG and the SVG both draw, so they agree: per schedule its colour, the mean over seeds of
 * the best-so-far test mean@k, and each seed's own curve; the axes (x in rollouts, y in percent).
 */
record PlotData(String title, int k, List<Line> lines, Axis xAxis, Axis yAxis) {

  /** Tableau 10: distinct, colour-blind friendly; schedules beyond ten reuse colours. */
  private static final Color[] PALETTE = {
      new Color(0x4E79A7), new Color(0xF28E2B), new Color(0xE15759), new Color(0x76B7B2),
      new Color(0x59A14F), new Color(0xEDC948), new Color(0xB07AA1), new Color(0xFF9DA7),
      new Color(0x9C755F), new Color(0xBAB0AC)};

  record Line(String schedule, Color color, Curve mean, List<Curve> seeds) {}

  static final String X_TITLE = "training rollouts spent";

  String yTitle() {
    return "test mean@" + k + " (%)";
  }

  static String caption(int k) {
    return "Each line is a schedule's best test mean@" + k + " so far, as a step function of the"
        + " training rollouts spent (test evaluation not counted), averaged over seeds at every"
        + " rollout count where any seed was evaluated; a seed that ended earlier holds its last"
        + " value. Thin lines: single seeds.";
  }

  static PlotData of(String title, int k, List<ScheduleStats> stats) {
    List<Line> lines = new ArrayList<>();
    double maxX = 0;
    double maxY = 0;
    for (int i = 0; i < stats.size(); i++) {
      List<Curve> seeds = stats.get(i).runs().stream().map(r -> Curve.bestSoFar(r.curve()))
          .toList();
      Curve mean = Curve.mean(seeds);
      for (Curve c : seeds) {
        maxX = Math.max(maxX, c.lastX());
        maxY = Math.max(maxY, c.maxY());
      }
      lines.add(new Line(stats.get(i).schedule(), PALETTE[i % PALETTE.length], mean, seeds));
    }
    return new PlotData(title, k, lines, Axis.upTo(maxX), Axis.upTo(Math.min(100, maxY * 100)));
  }
}
