package whale.workflows.activities;

/**
 * mean@k (mean over problems of the fraction of k samples the verifier accepts), with pass@k, maj@k,
 * the mean number of model calls per episode, and the rollouts spent.
 */
public record MeanAtKResult(
    double meanAtK,
    double passAtK,
    double majAtK,
    double meanTurns,
    int k,
    int problems,
    int rollouts,
    String tracesRef) {}
