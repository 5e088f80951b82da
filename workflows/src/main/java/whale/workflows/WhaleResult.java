package whale.workflows;

import java.util.List;

/**
 * The finished run: best test mean@8 and where it was reached, the final checkpoint and harness, and
 * every test evaluation in order (the learning curve).
 *
 * <p>{@code deferredReleases}: checkpoints a comparison's cell released but left for its parent to
 * delete (empty for a run of its own; null in results recorded before it existed).
 */
public record WhaleResult(
    String name,
    String schedule,
    double baseMeanAt8,
    double bestMeanAt8,
    String bestAt,
    long rolloutsAtBest,
    long rollouts,
    long testRollouts,
    int rounds,
    int steps,
    boolean stopped,
    String checkpointRef,
    String harnessRef,
    String harnessName,
    List<RunEvent> evaluations,
    List<String> deferredReleases) {}
