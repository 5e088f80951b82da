package whale.activities;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.ComparisonRun;
import whale.workflows.activities.CurvePoint;
import whale.workflows.activities.ReportRequest;

class ReportActivitiesImplTest {
  @TempDir Path root;

  static ReportRequest request(String key) {
    return new ReportRequest(key, "two schedules", 8, List.of(
        new ComparisonRun("whale", 1, "wf-1", 0.05, 0.25, 100, 200,
            List.of(new CurvePoint(0, 0.05, "base", null), new CurvePoint(100, 0.25, "r1 weight", null))),
        new ComparisonRun("weight-only", 1, "wf-2", 0.05, 0.10, 200, 200,
            List.of(new CurvePoint(0, 0.05, "base", null), new CurvePoint(200, 0.10, "r1 weight", null)))));
  }

  @Test
  void writesBrowsableFilesAndStoresContentAddressedCopies() throws Exception {
    ActivityRuntime rt = ActivityRuntime.open(root);
    ComparisonReport rep = new ReportActivitiesImpl(rt).render(request("cmp-1"));
    Path dir = rt.store().namedDir("reports/cmp-1");
    assertEquals(dir.resolve("plot.png").toString(), rep.pngPath());
    assertEquals(dir.resolve("report.html").toString(), rep.htmlPath());
    assertArrayEquals(Files.readAllBytes(Path.of(rep.pngPath())), rt.store().getBytes(rep.pngRef()));
    assertArrayEquals(Files.readAllBytes(Path.of(rep.htmlPath())),
        rt.store().getBytes(rep.htmlRef()));
    String md = Files.readString(dir.resolve("report.md"));
    assertTrue(md.startsWith("# two schedules\n") && md.contains(rep.table()), md);
    assertTrue(rep.table().contains("| whale (tied) | 1 |"), rep.table()); // one seed: no interval
  }

  @Test
  void aRetryGivesTheSameRefsAndFiles() throws Exception {
    ActivityRuntime rt = ActivityRuntime.open(root);
    ReportActivitiesImpl impl = new ReportActivitiesImpl(rt);
    ComparisonReport a = impl.render(request("cmp-2"));
    byte[] html = Files.readAllBytes(Path.of(a.htmlPath()));
    ComparisonReport b = impl.render(request("cmp-2"));
    assertEquals(a, b);
    assertArrayEquals(html, Files.readAllBytes(Path.of(b.htmlPath())));
    try (var files = Files.list(Path.of(a.htmlPath()).getParent())) {
      assertEquals(List.of("plot.png", "report.html", "report.md"),
          files.map(p -> p.getFileName().toString()).sorted().toList(), "no temporary files left");
    }
  }

  @Test
  void badKeyOrRequestFailsBeforeWriting() {
    ReportActivitiesImpl impl = new ReportActivitiesImpl(ActivityRuntime.open(root));
    assertThrows(IllegalArgumentException.class, () -> impl.render(request("../escape")));
    assertThrows(IllegalArgumentException.class, () -> impl.render(request(null)));
    assertThrows(IllegalArgumentException.class, () -> impl.render(
        new ReportRequest("empty", "t", 8, List.of())));
  }
}
