package whale.report;

import java.awt.Color;
import java.util.Locale;

/**
 * The plot as inline SVG, written by hand (axes, grid, one polyline per curve, legend): no library,
 * no external fonts, and it scales in the browser. No xmlns: HTML5 places inline SVG itself.
 */
final class SvgPlot {
  static final int WIDTH = 820;
  static final int HEIGHT = 480;
  private static final int LEFT = 70;
  private static final int RIGHT = WIDTH - 200;
  private static final int TOP = 50;
  private static final int BOTTOM = HEIGHT - 60;

  private SvgPlot() {}

  static String svg(PlotData d) {
    StringBuilder b = new StringBuilder();
    b.append("<svg width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT)
        .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
        .append("\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"")
        .append(Text.html(d.yTitle() + " against " + d.xTitle())).append("\">\n");
    b.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    b.append(text(WIDTH / 2.0, 26, "middle", "font-size=\"15\" font-weight=\"bold\"", d.title()));
    axes(b, d);
    for (PlotData.Line line : d.lines()) {
      if (line.lo() != null) {
        band(b, d, line);
      }
    }
    for (PlotData.Line line : d.lines()) {
      for (Curve seed : line.seeds()) {
        polyline(b, d, seed, line.color(), 1, 0.35);
      }
    }
    for (PlotData.Line line : d.lines()) {
      polyline(b, d, line.mean(), line.color(), 2.5, 1);
    }
    legend(b, d);
    b.append("</svg>\n");
    return b.toString();
  }

  private static void axes(StringBuilder b, PlotData d) {
    Axis x = d.xAxis();
    Axis y = d.yAxis();
    b.append("<g stroke=\"#ebebeb\" stroke-width=\"1\">\n");
    for (int i = 0; i <= y.ticks(); i++) {
      double py = py(d, y.tick(i) / 100);
      b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>%n",
          LEFT, py, RIGHT, py));
    }
    for (int i = 0; i <= x.ticks(); i++) {
      double px = LEFT + (RIGHT - LEFT) * x.tick(i) / x.max();
      b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>%n",
          px, TOP, px, BOTTOM));
    }
    b.append("</g>\n");
    b.append(String.format(Locale.ROOT, "<polyline points=\"%d,%d %d,%d %d,%d\" fill=\"none\""
        + " stroke=\"#333333\" stroke-width=\"1\"/>%n", LEFT, TOP, LEFT, BOTTOM, RIGHT, BOTTOM));
    for (int i = 0; i <= y.ticks(); i++) {
      b.append(text(LEFT - 6, py(d, y.tick(i) / 100) + 4, "end", "", Axis.label(y.tick(i))));
    }
    for (int i = 0; i <= x.ticks(); i++) {
      b.append(text(LEFT + (RIGHT - LEFT) * x.tick(i) / x.max(), BOTTOM + 16, "middle", "", Axis.label(x.tick(i))));
    }
    b.append(text((LEFT + RIGHT) / 2.0, BOTTOM + 40, "middle", "", d.xTitle()));
    double midY = (TOP + BOTTOM) / 2.0;
    b.append(text(18, midY, "middle",
        String.format(Locale.ROOT, "transform=\"rotate(-90 18 %.1f)\"", midY), d.yTitle()));
  }

  private static void polyline(StringBuilder b, PlotData d, Curve c, Color color, double width,
      double opacity) {
    double[][] p = c.polyline();
    String stroke = hex(color);
    if (p[0].length == 1) { // a lone evaluation: a dot, since a one-point line draws nothing
      b.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\""
          + " fill-opacity=\"%.2f\"/>%n", px(d, p[0][0]), py(d, p[1][0]), width + 1, stroke,
          opacity));
      return;
    }
    b.append("<polyline fill=\"none\" stroke=\"").append(stroke).append('"');
    b.append(String.format(Locale.ROOT, " stroke-width=\"%.1f\" stroke-opacity=\"%.2f\"",
        width, opacity));
    b.append(" stroke-linejoin=\"round\" points=\"");
    for (int i = 0; i < p[0].length; i++) {
      b.append(String.format(Locale.ROOT, i == 0 ? "%.1f,%.1f" : " %.1f,%.1f", px(d, p[0][i]),
          py(d, p[1][i])));
    }
    b.append("\"/>\n");
  }

  private static void band(StringBuilder b, PlotData d, PlotData.Line line) {
    double[][] p = Curve.polygon(line.lo(), line.hi());
    b.append("<polygon fill=\"").append(hex(line.color()))
        .append("\" fill-opacity=\"0.15\" stroke=\"none\" points=\"");
    for (int i = 0; i < p[0].length; i++) {
      b.append(String.format(Locale.ROOT, i == 0 ? "%.1f,%.1f" : " %.1f,%.1f", px(d, p[0][i]),
          py(d, p[1][i])));
    }
    b.append("\"/>\n");
  }

  private static void legend(StringBuilder b, PlotData d) {
    int x0 = RIGHT + 16;
    int y0 = TOP + 8;
    for (int i = 0; i < d.lines().size(); i++) {
      PlotData.Line line = d.lines().get(i);
      int y = y0 + 20 * i;
      b.append(String.format(Locale.ROOT, "<g><title>%s</title><line x1=\"%d\" y1=\"%d\""
              + " x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2.5\"/>%n",
          Text.html(line.schedule()), x0, y, x0 + 24, y, hex(line.color())));
      b.append(text(x0 + 30, y + 4, "start", "", Text.shorten(line.schedule(), 24)));
      b.append("</g>\n");
    }
  }

  private static String text(double x, double y, String anchor, String attrs, String s) {
    return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s</text>%n",
        x, y, anchor, attrs.isEmpty() ? "" : " " + attrs, Text.html(s));
  }

  /** A curve's x (rollouts, or seconds along wall time) in pixels. */
  private static double px(PlotData d, double x) {
    return LEFT + (RIGHT - LEFT) * (x / d.along().unit) / d.xAxis().max();
  }

  private static double py(PlotData d, double fraction) {
    return BOTTOM - (BOTTOM - TOP) * (100 * fraction) / d.yAxis().max();
  }

  static String hex(Color c) {
    return String.format(Locale.ROOT, "#%06x", c.getRGB() & 0xFFFFFF);
  }
}
