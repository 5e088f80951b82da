package whale.workflows;

import java.util.List;

/**
 * Answer of the {@code status} query.
 *
 * @param phase "starting", "base", "weight", "harness", "done"
 * @param step RSFT steps done in the whole run
 * @param budgetSteps the weight budget in steps
 * @param rollouts training rollouts spent (weight steps + harness iterations)
 * @param testRollouts rollouts spent on test evaluation, counted apart
 * @param bestMeanAt8 best test mean@8 so far (NaN before the first evaluation)
 * @param bestAt where it was reached, e.g. "round 2 harness, step 14"
 * @param phaseWorkflowId the running phase's child workflow once it has started (so a signal to it
 *     arrives), or null between phases
 * @param continuedAsNew how many times the run has continued as new
 * @param rejected why recent malformed signal payloads were ignored (most recent last; kept in this
 *     run only), e.g. "signal phaseProgress ignored: seq: expected an integer, got the string \"x\""
 */
public record WhaleStatus(
    String phase,
    boolean paused,
    boolean stopRequested,
    int round,
    int step,
    int budgetSteps,
    int harnessIteration,
    long rollouts,
    long testRollouts,
    double bestMeanAt8,
    String bestAt,
    long rolloutsAtBest,
    String checkpointRef,
    String harnessRef,
    String harnessName,
    String phaseWorkflowId,
    int continuedAsNew,
    List<String> rejected) {}
