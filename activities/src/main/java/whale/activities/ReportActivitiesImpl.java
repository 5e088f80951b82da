package whale.activities;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import whale.report.ComparisonRenderer;
import whale.store.ArtifactStore;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.ReportActivities;
import whale.workflows.activities.ReportRequest;

/**
 * Renders a comparison report and stores it twice: browsable under
 * {@code named/reports/<reportKey>/} (report.md, plot.png, plot-wall.png where the runs have
 * evaluation times, report.html) and content-addressed (the
 * PNG and the page), whose references the workflow keeps. Idempotent without a memo: rendering is
 * pure and cheap, so a retry writes the same bytes to the same names and gets the same references.
 * Bad input fails with {@link IllegalArgumentException} (see {@link ComparisonRenderer}).
 */
public class ReportActivitiesImpl implements ReportActivities {
  private final ActivityRuntime runtime;

  public ReportActivitiesImpl(ActivityRuntime runtime) {
    this.runtime = runtime;
  }

  @Override
  public ComparisonReport render(ReportRequest request) {
    if (request == null || request.reportKey() == null) {
      throw new IllegalArgumentException("report: no reportKey");
    }
    ArtifactStore store = runtime.store();
    Path dir = store.namedDir("reports/" + request.reportKey()); // rejects a bad key first
    // rendering the plot can outlast the heartbeat timeout on a busy machine
    ComparisonRenderer.Rendered r = ActivityHeartbeat.during("render the report",
        () -> ComparisonRenderer.render(request));
    Path png = dir.resolve("plot.png");
    Path html = dir.resolve("report.html");
    ArtifactStore.writeAtomically(dir.resolve("report.md"),
        r.markdown().getBytes(StandardCharsets.UTF_8));
    ArtifactStore.writeAtomically(png, r.png());
    ArtifactStore.writeAtomically(html, r.html());
    if (r.wallPng() != null) {
      ArtifactStore.writeAtomically(dir.resolve("plot-wall.png"), r.wallPng());
    }
    return new ComparisonReport(r.table(), store.putBytes(r.png()), store.putBytes(r.html()),
        png.toString(), html.toString());
  }
}
