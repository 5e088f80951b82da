package whale.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The plot as a PNG, drawn by XChart at the SVG's size and scale. Fonts, colours and antialiasing
 * are fixed, so one JVM renders a request to the same bytes every time; another machine's fonts
 * may differ in the pixels.
 */
final class PngPlot {
  static {
    // Workers have no display; set before the first AWT use unless the launcher chose.
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
  }

  private PngPlot() {}

  static byte[] png(PlotData d) {
    XYChart chart = new XYChartBuilder().width(SvgPlot.WIDTH).height(SvgPlot.HEIGHT)
        .title(d.title()).xAxisTitle(d.xTitle()).yAxisTitle(d.yTitle()).build();
    style(chart, d);
    // Legend names first, so a seed series never takes a name the legend needs.
    Set<String> names = new HashSet<>();
    List<String> legend = new ArrayList<>();
    for (PlotData.Line line : d.lines()) {
      legend.add(unique(names, Text.shorten(line.schedule(), 24)));
    }
    for (PlotData.Line line : d.lines()) {
      if (line.lo() == null) {
        continue;
      }
      // The interval band first, so the lines draw over it.
      double[][] p = Curve.polygon(line.lo(), line.hi());
      double[] pct = new double[p[1].length];
      double[] xs = new double[p[0].length];
      for (int i = 0; i < pct.length; i++) {
        pct[i] = 100 * p[1][i];
        xs[i] = p[0][i] / d.along().unit;
      }
      XYSeries band = chart.addSeries(unique(names, line.schedule() + " interval"), xs, pct);
      band.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.PolygonArea);
      band.setFillColor(new Color(line.color().getRed(), line.color().getGreen(),
          line.color().getBlue(), 38));
      band.setLineColor(new Color(0, 0, 0, 0));
      band.setMarker(SeriesMarkers.NONE);
      band.setShowInLegend(false);
    }
    for (PlotData.Line line : d.lines()) {
      Color faint = new Color(line.color().getRed(), line.color().getGreen(),
          line.color().getBlue(), 90);
      int i = 0;
      for (Curve seed : line.seeds()) {
        XYSeries s = series(chart, unique(names, line.schedule() + " seed " + i++), seed, faint, 1f,
            d.along().unit);
        s.setShowInLegend(false);
      }
    }
    for (int i = 0; i < d.lines().size(); i++) {
      // Added last so the means draw over the seeds.
      PlotData.Line line = d.lines().get(i);
      series(chart, legend.get(i), line.mean(), line.color(), 2.5f, d.along().unit);
    }
    try {
      return BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode the plot as PNG", e);
    }
  }

  private static XYSeries series(XYChart chart, String name, Curve c, Color color, float width,
      double unit) {
    double[][] p = c.polyline();
    double[] pct = new double[p[1].length];
    double[] xs = new double[p[0].length];
    for (int i = 0; i < pct.length; i++) {
      pct[i] = 100 * p[1][i];
      xs[i] = p[0][i] / unit;
    }
    XYSeries s = chart.addSeries(name, xs, pct);
    s.setLineColor(color);
    s.setLineWidth(width);
    s.setLineStyle(new BasicStroke(width, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
    if (p[0].length == 1) { // a lone evaluation: a dot, since a one-point line draws nothing
      s.setMarker(SeriesMarkers.CIRCLE);
      s.setMarkerColor(color);
    } else {
      s.setMarker(SeriesMarkers.NONE);
    }
    return s;
  }

  private static void style(XYChart chart, PlotData d) {
    var st = chart.getStyler();
    st.setAntiAlias(true);
    st.setLocale(Locale.ROOT);
    st.setBaseFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    st.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
    st.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    st.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    st.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    st.setChartBackgroundColor(Color.WHITE);
    st.setPlotBackgroundColor(Color.WHITE);
    st.setPlotBorderVisible(false);
    st.setPlotGridLinesColor(new Color(0xEBEBEB));
    st.setLegendPosition(Styler.LegendPosition.OutsideE);
    st.setLegendBorderColor(Color.WHITE);
    st.setChartTitleBoxVisible(false);
    st.setXAxisMin(0.0);
    st.setXAxisMax(d.xAxis().max());
    st.setYAxisMin(0.0);
    st.setYAxisMax(d.yAxis().max());
    st.setXAxisDecimalPattern("#0.##");
    st.setYAxisDecimalPattern("#0.##");
  }

  /** XChart keys series by name; a user may call two schedules alike once shortened. */
  private static String unique(Set<String> names, String name) {
    String n = name;
    for (int i = 2; !names.add(n); i++) {
      n = name + " (" + i + ")";
    }
    return n;
  }
}
