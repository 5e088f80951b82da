package whale.workflows.activities;

import java.util.List;

/**
 * Ask the proposer for new candidates after reading the phase's archive.
 *
 * @param phaseKey names the phase's archive directory in the artifact store
 * @param candidates M
 * @param harness the spec's harness section (the proposer's settings)
 */
public record ProposeRequest(
    TaskRef task,
    String proposer,
    String phaseKey,
    int iteration,
    int candidates,
    long seed,
    List<ArchiveEntry> archive,
    whale.workflows.ExperimentSpec.HarnessSpec harness) {}
