package whale.workflows.activities;

/**
 * One test evaluation of a run: test mean@k after {@code rollouts} training rollouts, and
 * {@code wallMillis} of workflow time after the run's base evaluation (null where the run's history
 * predates the evaluations' times).
 */
public record CurvePoint(long rollouts, double meanAtK, String label, Long wallMillis) {}
