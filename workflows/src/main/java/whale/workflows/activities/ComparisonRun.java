package whale.workflows.activities;

import java.util.List;

/**
 * One (schedule, seed) run of a comparison, as the report needs it.
 *
 * @param bestMeanAtK best test mean@k of the run (base evaluation included)
 * @param rolloutsAtBest training rollouts spent when the best was first reached
 * @param rollouts training rollouts spent in all
 * @param curve every test evaluation in order, the base model's first
 */
public record ComparisonRun(String schedule, long seed, String workflowId, double baseMeanAtK,
    double bestMeanAtK, long rolloutsAtBest, long rollouts, List<CurvePoint> curve) {}
