package whale.report;

import java.awt.Color;
import java.util.ArrayList;
import java.util.List;
import whale.workflows.activities.ComparisonRun;
import whale.workflows.activities.CurvePoint;

/**
 * What the PNG and the SVG both draw, so they agree: per schedule its colour, the mean over seeds of
 * the best-so-far test mean@k, and each seed's own curve; the axes (x in rollouts, y in percent).
 */
record PlotData(String title, int k, Along along, List<Line> lines, Axis xAxis, Axis yAxis) {

  /**
   * What the x axis counts: training rollouts, or workflow time since each run's base evaluation
   * (curves in seconds, drawn in minutes). Cells of a comparison share the workers, so wall time
   * includes waiting for them.
   */
  enum Along {
    ROLLOUTS("training rollouts spent", 1),
    WALL("minutes since the base evaluation", 60);

    final String title;
    /** Curve x units per drawn unit. */
    final double unit;

    Along(String title, double unit) {
      this.title = title;
      this.unit = unit;
    }

    /** The point's x, or null where it has none (a wall time recorded before they existed). */
    Long x(CurvePoint p) {
      return this == ROLLOUTS ? Long.valueOf(p.rollouts())
          : p.wallMillis() == null ? null : p.wallMillis() / 1000;
    }
  }

  /** Tableau 10: distinct, colour-blind friendly; schedules beyond ten reuse colours. */
  private static final Color[] PALETTE = {
      new Color(0x4E79A7), new Color(0xF28E2B), new Color(0xE15759), new Color(0x76B7B2),
      new Color(0x59A14F), new Color(0xEDC948), new Color(0xB07AA1), new Color(0xFF9DA7),
      new Color(0x9C755F), new Color(0xBAB0AC)};

  /** lo and hi: the mean's 95 % interval over seeds at each of its x's; null for one seed. */
  record Line(String schedule, Color color, Curve mean, Curve lo, Curve hi, List<Curve> seeds) {}

  String yTitle() {
    return "test mean@" + k + " (%)";
  }

  String xTitle() {
    return along.title;
  }

  static String caption(int k, Along along) {
    String x = along == Along.ROLLOUTS
        ? " training rollouts spent (test evaluation not counted), averaged over seeds at every"
            + " rollout count where any seed was evaluated"
        : " workflow time since the run's base evaluation (cells share the workers, so it includes"
            + " waiting for them), averaged over seeds at every time where any seed was evaluated";
    return "Each line is a schedule's best test mean@" + k + " so far, as a step function of the"
        + x + "; a seed that ended earlier holds its last"
        + " value. Thin lines: single seeds; shaded: the 95 % Student-t interval over seeds around"
        + " the mean (two or more seeds).";
  }

  /** The plot along {@code along}; null when some run has no x for some evaluation. */
  static PlotData of(String title, int k, List<ScheduleStats> stats, Along along) {
    for (ScheduleStats s : stats) {
      for (ComparisonRun r : s.runs()) {
        if (r.curve().stream().anyMatch(p -> along.x(p) == null)) {
          return null;
        }
      }
    }
    List<Line> lines = new ArrayList<>();
    double maxX = 0;
    double maxY = 0;
    for (int i = 0; i < stats.size(); i++) {
      List<Curve> seeds = stats.get(i).runs().stream().map(r -> Curve.bestSoFar(r.curve(), along::x))
          .toList();
      Curve[] band = Curve.band(seeds);
      for (Curve c : seeds) {
        maxX = Math.max(maxX, c.lastX());
        maxY = Math.max(maxY, c.maxY());
      }
      if (band[2] != null) {
        maxY = Math.max(maxY, band[2].maxY());
      }
      lines.add(new Line(stats.get(i).schedule(), PALETTE[i % PALETTE.length], band[0], band[1],
          band[2], seeds));
    }
    return new PlotData(title, k, along, lines, Axis.upTo(maxX / along.unit),
        Axis.upTo(Math.min(100, maxY * 100)));
  }
}
