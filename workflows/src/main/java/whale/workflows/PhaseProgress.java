package whale.workflows;

/**
 * A phase workflow's report to its parent after each unit of work, so that the parent's status,
 * history and search attributes stay live while the phase runs. The phase's result stays the
 * authority: the parent replaces these with the result's events when the phase ends.
 *
 * @param phaseWorkflowId the reporting phase; reports from any other workflow are ignored
 * @param seq 1, 2, ... within the phase; a repeated or older report is ignored
 */
public record PhaseProgress(String phaseWorkflowId, int seq, RunEvent event, int steps,
    int harnessIteration, long rollouts, long testRollouts, String checkpointRef) {}
