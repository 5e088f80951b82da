package whale.workflows.activities;

import java.util.List;
import whale.workflows.Proposer;

/**
 * Ask the proposer for new candidates after reading the phase's archive.
 *
 * @param phaseKey names the phase's archive directory in the artifact store
 * @param candidates M
 * @param harness the spec's harness section (the proposer's settings)
 * @param promptOnly the Fast-Slow control: a candidate may differ from the incoming harness only in
 *     prompt text; the proposer is told so and the validator rejects any other difference
 * @param incomingRef the phase's incoming harness (what prompt-only candidates are compared with)
 */
public record ProposeRequest(
    TaskRef task,
    Proposer proposer,
    String phaseKey,
    int iteration,
    int candidates,
    long seed,
    List<ArchiveEntry> archive,
    whale.workflows.ExperimentSpec.HarnessSpec harness,
    boolean promptOnly,
    String incomingRef) {

  /** Any change allowed. */
  public ProposeRequest(TaskRef task, Proposer proposer, String phaseKey, int iteration,
      int candidates, long seed, List<ArchiveEntry> archive, whale.workflows.ExperimentSpec.HarnessSpec harness) {
    this(task, proposer, phaseKey, iteration, candidates, seed, archive, harness, false, null);
  }
}
