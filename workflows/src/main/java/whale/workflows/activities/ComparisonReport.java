package whale.workflows.activities;

/**
 * A rendered comparison report.
 *
 * @param table the results table in Markdown: per schedule, best mean@k as the mean and its 95 %
 *     interval over seeds and the rollouts spent to reach it; under it, the reference schedule
 *     against each other one, paired by seed
 * @param pngRef artifact-store reference of the plot (test mean@k against rollouts, a line per schedule)
 * @param htmlRef reference of the self-contained HTML page (table and plot, no external resources)
 * @param pngPath where the PNG lies on the worker that rendered it
 * @param htmlPath where the HTML page lies on the worker that rendered it
 */
public record ComparisonReport(String table, String pngRef, String htmlRef, String pngPath,
    String htmlPath) {}
