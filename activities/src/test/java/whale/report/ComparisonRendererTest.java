package whale.report;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import whale.workflows.activities.ComparisonRun;
import whale.workflows.activities.CurvePoint;
import whale.workflows.activities.ReportRequest;

class ComparisonRendererTest {

  /** An evaluation after {@code rollouts}, and 0.1 s of workflow time per rollout. */
  static CurvePoint p(long rollouts, double mean) {
    return new CurvePoint(rollouts, mean, "eval", rollouts * 100);
  }

  static ComparisonRun run(String schedule, long seed, double base, double best, long atBest,
      long rollouts, CurvePoint... curve) {
    return new ComparisonRun(schedule, seed, schedule + "-" + seed, base, best, atBest, rollouts,
        List.of(curve));
  }

  /** Three schedules, 3 / 2 / 1 seeds, interleaved so the first-seen order matters. */
  static ReportRequest sample(String whaleName) {
    return new ReportRequest("test", "math: schedules compared", 8, List.of(
        run(whaleName, 1, 0.04, 0.30, 1000, 5000, p(0, 0.04), p(1000, 0.30), p(3000, 0.28),
            p(5000, 0.29)),
        run("weight-only", 1, 0.04, 0.10, 3000, 5000, p(0, 0.04), p(3000, 0.10), p(5000, 0.09)),
        run(whaleName, 2, 0.05, 0.25, 2000, 5000, p(0, 0.05), p(2000, 0.25), p(5000, 0.20)),
        run("harness-only", 1, 0.04, 0.08, 1500, 3000, p(0, 0.04), p(1500, 0.08), p(3000, 0.08)),
        run("weight-only", 2, 0.06, 0.14, 5000, 5000, p(0, 0.06), p(2500, 0.12), p(5000, 0.14)),
        run(whaleName, 3, 0.06, 0.20, 4000, 6000, p(0, 0.06), p(2500, 0.10), p(4000, 0.20),
            p(6000, 0.15))));
  }

  static List<String[]> rows(String table) {
    List<String[]> rows = new ArrayList<>();
    for (String line : table.split("\n")) {
      if (line.startsWith("| ")) {
        String[] cells = line.substring(2, line.length() - 2).split(" \\| ");
        rows.add(cells);
      }
    }
    return rows.subList(1, rows.size()); // without the header
  }

  @Test
  void tableHasHandComputedMeansIntervalsAndRollouts() {
    String table = ComparisonRenderer.render(sample("whale")).table();
    List<String[]> rows = rows(table);
    assertEquals(3, rows.size(), table);
    // whale: best 30, 25, 20 -> mean 25, sd 5, half-width t(0.975, 2) 5 / sqrt(3) = 4.3027 x 2.8868
    // = 12.42; base 4, 5, 6 -> 5, half 4.3027 x 0.5774 = 2.48; rollouts to best 7000 / 3.
    // weight-only: best 10, 14 -> 12 ± 12.7062 x 2 = 25.41, base 4, 6 -> 5 ± 12.71. Both overlap
    // whale's interval, and one seed (harness-only) has none: nothing is shown best.
    assertArrayEquals(new String[] {"whale (tied)", "3", "5.00 [2.52, 7.48]",
        "25.00 [12.58, 37.42]", "2333", "5333"}, rows.get(0), table);
    assertArrayEquals(new String[] {"weight-only (tied)", "2", "5.00 [-7.71, 17.71]",
        "12.00 [-13.41, 37.41]", "4000", "5000"}, rows.get(1), table);
    assertArrayEquals(new String[] {"harness-only (tied)", "1", "4.00 [—]", "8.00 [—]", "1500",
        "3000"}, rows.get(2), table);
    assertTrue(table.startsWith("| schedule | seeds | base mean@8 (%) | best mean@8 (%) |"), table);
    assertFalse(table.contains("**"), table);
    // paired by seed: whale - weight-only on seeds 1, 2 = 20, 11 -> 15.5 ± 12.7062 x 4.5 = 57.18
    assertTrue(table.contains("- whale against weight-only: no difference shown with 2 seeds"
        + " (mean difference +15.50 points [-41.68, 72.68])\n"), table);
    assertTrue(table.contains("- whale against harness-only: no difference shown with 1 seed"
        + " (mean difference +22.00 points; one seed gives no interval)\n"), table);
  }

  /** Five seeds each: whale 30, 32, 28, 31, 29; weight-only 10, 12, 9, 11, 10; harness-only 40, 41,
   * 39, 42, 40 (percent). */
  static ReportRequest fiveSeeds() {
    double[][] best = {{0.30, 0.32, 0.28, 0.31, 0.29}, {0.10, 0.12, 0.09, 0.11, 0.10},
        {0.40, 0.41, 0.39, 0.42, 0.40}};
    String[] names = {"whale", "weight-only", "harness-only"};
    List<ComparisonRun> runs = new ArrayList<>();
    for (int s = 0; s < names.length; s++) {
      for (int seed = 0; seed < 5; seed++) {
        runs.add(run(names[s], seed, 0.05, best[s][seed], 100, 200, p(0, 0.05),
            p(100, best[s][seed])));
      }
    }
    return new ReportRequest("test", "five seeds", 8, runs);
  }

  @Test
  void fiveSeedsSeparateTheSchedulesAndThePairedSentencesSaySo() {
    String table = ComparisonRenderer.render(fiveSeeds()).table();
    List<String[]> rows = rows(table);
    // whale: sd 1.5811, half 2.7764 x 1.5811 / sqrt(5) = 1.96; weight-only and harness-only:
    // sd 1.1402, half 1.42. harness-only's interval clears both others: best.
    assertArrayEquals(new String[] {"whale", "5", "5.00 [5.00, 5.00]", "30.00 [28.04, 31.96]",
        "100", "200"}, rows.get(0), table);
    assertArrayEquals(new String[] {"weight-only", "5", "5.00 [5.00, 5.00]",
        "10.40 [8.98, 11.82]", "100", "200"}, rows.get(1), table);
    assertArrayEquals(new String[] {"**harness-only** (best)", "5", "5.00 [5.00, 5.00]",
        "**40.40 [38.98, 41.82]**", "100", "200"}, rows.get(2), table);
    // whale - weight-only: 20, 20, 19, 20, 19 -> 19.6, sd 0.5477, half 2.7764 x 0.2449 = 0.68.
    assertTrue(table.contains("- whale ahead of weight-only by 19.60 points [18.92, 20.28] over 5"
        + " seeds\n"), table);
    // whale - harness-only: -10, -9, -11, -11, -11 -> -10.4, sd 0.8944, half 1.11.
    assertTrue(table.contains("- whale behind harness-only by 10.40 points [9.29, 11.51] over 5"
        + " seeds\n"), table);
    String html = new String(ComparisonRenderer.render(fiveSeeds()).html(), StandardCharsets.UTF_8);
    assertTrue(html.contains("<tr class=\"best\"><td>harness-only (best)</td>"), html);
    assertTrue(html.contains("<li>whale ahead of weight-only by 19.60 points [18.92, 20.28] over 5"
        + " seeds</li>"), html);
    // the plot shades each schedule's interval band: one polygon per schedule
    assertEquals(3, count(ComparisonRenderer.render(fiveSeeds()).svg(), "<polygon"));
  }

  @Test
  void wallTimePlotWhereEveryEvaluationHasATime() throws Exception {
    ComparisonRenderer.Rendered r = ComparisonRenderer.render(sample("whale"));
    // 6000 rollouts at 0.1 s each: 10 minutes, the axis' last tick
    assertTrue(r.wallSvg().contains(">minutes since the base evaluation</text>"), r.wallSvg());
    assertTrue(r.wallSvg().contains(">10</text>"), r.wallSvg());
    assertNotNull(ImageIO.read(new ByteArrayInputStream(r.wallPng())), "wall plot: not a PNG");
    assertTrue(r.markdown().contains("](plot-wall.png)"), r.markdown());
    assertEquals(2, count(new String(r.html(), StandardCharsets.UTF_8), "<svg"));
    // one evaluation without a time (a history from before them): no wall plot, the rest renders
    List<ComparisonRun> runs = new ArrayList<>(sample("whale").runs());
    runs.add(new ComparisonRun("old", 1, "old-1", 0.1, 0.1, 0, 0,
        List.of(new CurvePoint(0, 0.1, "base", null))));
    ComparisonRenderer.Rendered old = ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, runs));
    assertNull(old.wallSvg());
    assertNull(old.wallPng());
    assertFalse(old.markdown().contains("plot-wall.png"), old.markdown());
    assertEquals(1, count(new String(old.html(), StandardCharsets.UTF_8), "<svg"));
  }

  @Test
  void studentTQuantilesAndIntervals() {
    assertEquals(12.7062, Interval.t975(1), 1e-4);
    assertEquals(2.7764, Interval.t975(4), 1e-4);
    assertEquals(2.0423, Interval.t975(30), 1e-4);
    assertEquals(2.0003, Interval.t975(60), 1e-4); // the expansion, against the published table
    assertEquals(1.9840, Interval.t975(100), 1e-4);
    Interval one = Interval.of(new double[] {0.3});
    assertFalse(one.defined());
    assertEquals(0.3, one.mean(), 0);
    assertTrue(one.overlaps(Interval.of(new double[] {0.9, 0.91})));
    assertEquals(0, one.sign());
    Interval i = Interval.of(new double[] {1, 2, 3, 4, 5}); // sd sqrt(2.5), half 2.7764 x 0.7071
    assertEquals(3 - 1.96322, i.lo(), 1e-4);
    assertEquals(3 + 1.96322, i.hi(), 1e-4);
    assertEquals(1, i.sign());
    assertFalse(i.overlaps(Interval.of(new double[] {10, 10.1}))); // [9.41, 10.69]
    assertThrows(IllegalArgumentException.class, () -> Interval.of(new double[0]));
  }

  @Test
  void scheduleStatsKeepFullPrecision() {
    List<ScheduleStats> s = ScheduleStats.of(sample("whale").runs());
    assertEquals(0.25, s.get(0).bestMean(), 1e-12);
    assertEquals(0.25 - 4.3027 * 0.05 / Math.sqrt(3), s.get(0).best().lo(), 1e-6);
    assertEquals(7000 / 3.0, s.get(0).rolloutsAtBestMean(), 1e-9);
    assertEquals(0.12 + 12.7062 * Math.sqrt(0.0008) / Math.sqrt(2), s.get(1).best().hi(), 1e-6);
    assertFalse(s.get(2).best().defined());
  }

  @Test
  void meanCurveIsBestSoFarOnTheUnionOfRolloutCounts() {
    Curve a = Curve.bestSoFar(List.of(p(0, 0.1), p(10, 0.3), p(20, 0.2)));
    Curve b = Curve.bestSoFar(List.of(p(0, 0.2), p(15, 0.25), p(15, 0.05)));
    assertArrayEquals(new long[] {0, 10, 20}, a.x());
    assertArrayEquals(new double[] {0.1, 0.3, 0.3}, a.y(), 1e-12);
    assertArrayEquals(new long[] {0, 15}, b.x());
    Curve m = Curve.mean(List.of(a, b));
    assertArrayEquals(new long[] {0, 10, 15, 20}, m.x());
    // b holds 0.25 past its last evaluation at 15
    assertArrayEquals(new double[] {0.15, 0.25, 0.275, 0.275}, m.y(), 1e-12);
    double[][] steps = m.polyline();
    assertArrayEquals(new double[] {0, 10, 10, 15, 15, 20, 20}, steps[0], 1e-12);
    assertArrayEquals(new double[] {0.15, 0.15, 0.25, 0.25, 0.275, 0.275, 0.275}, steps[1], 1e-12);
  }

  @Test
  void axisIsRound() {
    assertEquals(new Axis(7000, 1000), Axis.upTo(6000.5));
    assertEquals(new Axis(30, 5), Axis.upTo(29.999));
    assertEquals(new Axis(1, 0.2), Axis.upTo(0));
    assertEquals("0.6", Axis.label(3 * 0.2));
    assertEquals("2000", Axis.label(2000.0));
  }

  @Test
  void pngDecodesAtItsSizeWithTheSchedulesColours() throws Exception {
    byte[] png = ComparisonRenderer.render(sample("whale")).png();
    BufferedImage img = ImageIO.read(new ByteArrayInputStream(png));
    assertNotNull(img, "not a PNG");
    assertEquals(SvgPlot.WIDTH, img.getWidth());
    assertEquals(SvgPlot.HEIGHT, img.getHeight());
    Set<Integer> colours = new HashSet<>();
    for (int y = 0; y < img.getHeight(); y++) {
      for (int x = 0; x < img.getWidth(); x++) {
        colours.add(img.getRGB(x, y) & 0xFFFFFF);
      }
    }
    assertTrue(colours.size() > 20, "looks blank: " + colours.size() + " colours");
    for (int rgb : new int[] {0x4E79A7, 0xF28E2B, 0xE15759}) { // the three schedules' lines
      assertTrue(colours.contains(rgb), String.format("no pixel of colour #%06x", rgb));
    }
  }

  @Test
  void htmlIsSelfContainedAndEscapesUserText() {
    String name = "<script>alert(1)</script>";
    ComparisonRenderer.Rendered r = ComparisonRenderer.render(sample(name));
    String html = new String(r.html(), StandardCharsets.UTF_8);
    assertTrue(html.startsWith("<!DOCTYPE html>"));
    assertTrue(html.contains("<svg"));
    assertTrue(html.contains("</svg>"));
    assertTrue(html.contains("src=\"data:image/png;base64,"));
    assertFalse(html.toLowerCase().contains("<script"), "unescaped script tag");
    assertTrue(html.contains("<td>&lt;script&gt;alert(1)&lt;/script&gt; (tied)</td>"));
    assertTrue(html.contains("<td>weight-only</td><td class=\"num\">2</td>"));
    assertTrue(html.contains("<td class=\"num\">12.00 [-13.41, 37.41]</td>"));
    assertTrue(html.contains("<td>harness-only</td>"));
    assertFalse(html.contains("http://") || html.contains("https://"), "external reference");
    assertEquals(count(html, "<tr"), count(html, "</tr>"));
    assertEquals(count(html, "<table"), count(html, "</table>"));
    // Markdown: the name cannot open HTML or break the table either
    assertTrue(r.table().contains("\\<script\\>alert(1)\\</script\\>"), r.table());
    assertEquals(3, rows(r.table()).size());
  }

  @Test
  void sameRequestSameBytes() {
    ComparisonRenderer.Rendered a = ComparisonRenderer.render(sample("whale"));
    ComparisonRenderer.Rendered b = ComparisonRenderer.render(sample("whale"));
    assertEquals(a.table(), b.table());
    assertEquals(a.markdown(), b.markdown());
    assertEquals(a.svg(), b.svg());
    assertArrayEquals(a.png(), b.png());
    assertArrayEquals(a.html(), b.html());
  }

  @Test
  void badInputIsRejectedClearly() {
    assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(null));
    var empty = assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of())));
    assertTrue(empty.getMessage().contains("no runs"), empty.getMessage());
    var nan = assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run("whale", 7, 0.1, Double.NaN, 0, 10,
            p(0, 0.1)))))).getMessage();
    assertTrue(nan.contains("'whale', seed 7") && nan.contains("bestMeanAtK"), nan);
    var pct = assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run("whale", 7, 0.1, 0.2, 0, 10,
            p(0, 0.1), p(10, 24.79)))))).getMessage();
    assertTrue(pct.contains("curve[1].meanAtK") && pct.contains("[0, 1]"), pct);
    var noCurve = assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run("whale", 7, 0.1, 0.2, 0, 10))))).getMessage();
    assertTrue(noCurve.contains("empty curve"), noCurve);
    var twice = assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run("whale", 7, 0.1, 0.2, 0, 10, p(0, 0.1)),
            run("whale", 7, 0.1, 0.2, 0, 10, p(0, 0.1)))))).getMessage();
    assertTrue(twice.contains("twice"), twice);
    var order = assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run("whale", 7, 0.1, 0.2, 0, 10, p(0, 0.1),
            p(10, 0.2), p(5, 0.1)))))).getMessage();
    assertTrue(order.contains("rollout order"), order);
    assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 0, sample("whale").runs())));
    assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run(" ", 7, 0.1, 0.2, 0, 10, p(0, 0.1))))));
    assertThrows(IllegalArgumentException.class, () -> ComparisonRenderer.render(
        new ReportRequest("k", "t", 8, List.of(run("whale", 7, 0.1, 0.2, 20, 10, p(0, 0.1))))));
  }

  @Test
  void singleEvaluationAndBlankTitleStillRender() {
    ComparisonRenderer.Rendered r = ComparisonRenderer.render(new ReportRequest("k", null, 8,
        List.of(run("base-only", 1, 0.1, 0.1, 0, 0, p(0, 0.1)))));
    assertTrue(r.markdown().startsWith("# WHALE comparison\n"), r.markdown());
    assertTrue(r.svg().contains("<circle"), "a lone point is drawn as a dot");
  }

  /** Writes a sample report where {@code -Dwhale.report.sampleDir=DIR} asks for one. */
  @Test
  void writesSampleWhenAsked() throws Exception {
    String dir = System.getProperty("whale.report.sampleDir");
    if (dir == null) {
      return;
    }
    ComparisonRenderer.Rendered r = ComparisonRenderer.render(sample("whale"));
    Path d = Files.createDirectories(Path.of(dir));
    Files.writeString(d.resolve("report.md"), r.markdown());
    Files.write(d.resolve("plot.png"), r.png());
    Files.write(d.resolve("plot-wall.png"), r.wallPng());
    Files.write(d.resolve("report.html"), r.html());
  }

  private static int count(String s, String needle) {
    int n = 0;
    for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) {
      n++;
    }
    return n;
  }
}
