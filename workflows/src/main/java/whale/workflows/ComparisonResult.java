package whale.workflows;

import java.util.List;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.ComparisonRun;

/** A finished comparison: every (schedule, seed) run and the rendered report. */
public record ComparisonResult(String name, int k, List<ComparisonRun> runs, ComparisonReport report) {}
