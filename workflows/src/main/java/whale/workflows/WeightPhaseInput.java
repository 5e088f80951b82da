package whale.workflows;

import java.util.List;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.Limits;
import whale.workflows.schedule.PatienceRule;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Retention;

/**
 * A weight phase's input, and its whole state when it continues as new (then {@code steps},
 * {@code checkpointRef}, the sampler, the patience state, the events and the flags are where the
 * previous run stopped).
 *
 * @param stepLimit the phase ends at this global step count at the latest
 * @param adaptive the patience rule may end the phase earlier
 * @param steps RSFT steps done in the whole run
 * @param rollouts training rollouts spent in the whole run
 * @param stepsThisRun steps done by this workflow run (continue-as-new counts from here)
 * @param retention the run's checkpoint retention; null for a run started before retention (its
 *     phases keep every checkpoint, as they did)
 */
public record WeightPhaseInput(
    ExperimentSpec spec,
    int round,
    int stepLimit,
    boolean adaptive,
    Limits limits,
    CandidateInfo harness,
    String checkpointRef,
    int steps,
    PersistentSampler.Position sampler,
    long rollouts,
    long testRollouts,
    PatienceRule.State patience,
    List<RunEvent> events,
    List<RunEvent> evaluations,
    boolean paused,
    boolean switchRequested,
    boolean stopRequested,
    int progressSeq,
    Retention retention) {}
