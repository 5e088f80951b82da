package whale.workflows;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A phase workflow's report to its parent after each unit of work, so that the parent's status,
 * history and search attributes stay live while the phase runs. The phase's result stays the
 * authority: the parent replaces these with the result's events when the phase ends.
 *
 * @param phaseWorkflowId the reporting phase; reports from any other workflow are ignored
 * @param seq 1, 2, ... within the phase; a repeated or older report is ignored
 */
public record PhaseProgress(String phaseWorkflowId, int seq, RunEvent event, int steps,
    int harnessIteration, long rollouts, long testRollouts, String checkpointRef) {
  private static final Set<String> KINDS = Set.of("rsft-step", "test-eval", "candidate", "accept");

  /** Why the parent must not take this report (empty when it may), each naming its field. */
  public List<String> problems() {
    List<String> out = new ArrayList<>();
    if (phaseWorkflowId == null || phaseWorkflowId.isBlank()) {
      out.add("phaseWorkflowId: must name the reporting phase workflow");
    }
    if (seq < 1) {
      out.add("seq: must be at least 1, got " + seq);
    }
    nonNegative(out, "steps", steps);
    nonNegative(out, "harnessIteration", harnessIteration);
    nonNegative(out, "rollouts", rollouts);
    nonNegative(out, "testRollouts", testRollouts);
    if (steps > 0 && (checkpointRef == null || !checkpointRef.matches("sha256:[0-9a-f]{64}"))) {
      out.add("checkpointRef: must be sha256:<64 hex digits> once steps > 0, got "
          + (checkpointRef == null ? "null" : "'" + checkpointRef + "'"));
    }
    if (event == null) {
      out.add("event: must be set");
      return out;
    }
    if (!KINDS.contains(event.kind())) {
      out.add("event.kind: must be one of " + new TreeSet<>(KINDS) + ", got "
          + (event.kind() == null ? "null" : "'" + event.kind() + "'"));
    }
    if (!Set.of("base", "weight", "harness").contains(event.phase())) {
      out.add("event.phase: must be base, weight or harness, got "
          + (event.phase() == null ? "null" : "'" + event.phase() + "'"));
    }
    nonNegative(out, "event.round", event.round());
    nonNegative(out, "event.step", event.step());
    nonNegative(out, "event.iteration", event.iteration());
    nonNegative(out, "event.rollouts", event.rollouts());
    fraction(out, "event.meanAt8", event.meanAt8());
    fraction(out, "event.passAt8", event.passAt8());
    fraction(out, "event.majAt8", event.majAt8());
    fraction(out, "event.success", event.success());
    // trainReward, loss and meanTurns stay unchecked: a diverged step's NaN loss is a real report
    if ("test-eval".equals(event.kind()) && event.meanAt8() == null) {
      out.add("event.meanAt8: a test-eval event needs its mean@k");
    }
    return out;
  }

  private static void nonNegative(List<String> out, String field, long v) {
    if (v < 0) {
      out.add(field + ": must not be negative, got " + v);
    }
  }

  private static void fraction(List<String> out, String field, Double v) {
    if (v != null && !(v >= 0 && v <= 1)) {
      out.add(field + ": must be in [0, 1], got " + v);
    }
  }
}
