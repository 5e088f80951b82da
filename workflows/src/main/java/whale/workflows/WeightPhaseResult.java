package whale.workflows;

import java.util.List;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Retention;

/**
 * What a weight phase hands back: the new checkpoint, where the sampler stands, the rollouts spent,
 * every step and every test evaluation it made, and why it ended ("length", "patience", "budget",
 * "switch", "stop"), and the run's checkpoint retention as the phase left it (null without).
 */
public record WeightPhaseResult(
    String checkpointRef,
    int steps,
    PersistentSampler.Position sampler,
    long rollouts,
    long testRollouts,
    List<RunEvent> events,
    List<RunEvent> evaluations,
    String endedBy,
    Retention retention) {}
