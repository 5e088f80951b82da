package whale.workflows;

import java.util.List;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.Limits;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.PhasePlanner;
import whale.workflows.schedule.Retention;

/**
 * Everything a WHALE run knows between phases: what it carries into a fresh run when it continues as
 * new. Only references and small numbers; the step-level record is capped (see {@link #KEPT_EVENTS}),
 * the learning curve (every test evaluation) is kept whole.
 */
public record WhaleState(
    Limits limits,
    int round,
    int steps,
    PhasePlanner.Kind lastPhase,
    long rollouts,
    long testRollouts,
    String checkpointRef,
    CandidateInfo harness,
    PersistentSampler.Position sampler,
    double baseMeanAt8,
    List<RunEvent> events,
    List<RunEvent> evaluations,
    boolean paused,
    boolean stopRequested,
    int continuedAsNew,
    Retention retention) {
  /** Most step/candidate events carried over; older ones stay in the phases' own histories. */
  public static final int KEPT_EVENTS = 500;
}
