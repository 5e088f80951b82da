package whale.workflows.activities;

/** One test evaluation of a run: test mean@k after {@code rollouts} training rollouts. */
public record CurvePoint(long rollouts, double meanAtK, String label) {}
