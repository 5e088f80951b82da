package whale.workflows.activities;

import java.util.List;

/**
 * Render a comparison's report.
 *
 * @param reportKey names the report's directory in the artifact store ({@code reports/<key>/})
 * @param title shown above the table and the plot
 * @param k the k of mean@k
 */
public record ReportRequest(String reportKey, String title, int k, List<ComparisonRun> runs) {}
