package whale.workflows;

import io.temporal.workflow.Workflow;
import java.util.Optional;

/** Sends a phase workflow's progress to its parent WHALE run, when it has one. */
final class PhaseReporter {
  private PhaseReporter() {}

  static void report(PhaseProgress p) {
    Optional<String> parent = Workflow.getInfo().getParentWorkflowId();
    if (parent.isEmpty()) {
      return; // started on its own (tests, or by hand): nobody to tell
    }
    try {
      // untyped: the parent's handler takes raw JSON (see WhaleWorkflow#phaseProgress)
      Workflow.newUntypedExternalWorkflowStub(parent.get()).signal("phaseProgress", p);
    } catch (RuntimeException e) {
      // Progress is a live view only; the phase's result is the authority, so a lost report is harmless.
      Workflow.getLogger(PhaseReporter.class).warn("progress report to {} failed: {}", parent.get(),
          e.toString());
    }
  }

  /** Whether this run should hand over to a fresh one: every N units of work, or when Temporal says. */
  static boolean continueAsNewDue(ExperimentSpec spec, int unitsThisRun) {
    int n = spec.workflow().continueAsNewAfter();
    return unitsThisRun > 0
        && ((n > 0 && unitsThisRun >= n) || Workflow.getInfo().isContinueAsNewSuggested());
  }
}
