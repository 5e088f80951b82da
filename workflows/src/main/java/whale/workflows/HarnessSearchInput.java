package whale.workflows;

import java.util.List;
import whale.workflows.activities.ArchiveEntry;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.Limits;

/**
 * A harness phase's input, and its whole state when it continues as new (the archive so far, the
 * iteration reached, the best score and when it last strictly improved).
 *
 * @param iterations iterations to run, or with {@code adaptive} the most to run
 * @param adaptive stop by the limits' harness patience rule
 * @param promptOnly the Fast-Slow control: candidates may change only prompt text
 * @param archive the phase's archive so far (empty at the start)
 * @param iteration the last iteration done (0 at the start)
 */
public record HarnessSearchInput(
    ExperimentSpec spec,
    int round,
    int iterations,
    boolean adaptive,
    boolean promptOnly,
    Limits limits,
    String checkpointRef,
    CandidateInfo incoming,
    long rollouts,
    List<ArchiveEntry> archive,
    int iteration,
    double best,
    int bestIteration,
    List<RunEvent> events,
    boolean paused,
    boolean switchRequested,
    boolean stopRequested,
    int progressSeq) {}
