package whale.workflows.activities;

import io.temporal.activity.ActivityInterface;
import java.util.List;

/** Harness code work, on task queue {@code whale-harness}: writing and compiling candidates. */
@ActivityInterface
public interface HarnessActivities {
  String TASK_QUEUE = "whale-harness";

  /**
   * The task's starting harness h0 in {@code form} (spec harness.initialForm; null, as runs started
   * before the field existed send it, is the completion form), stored and validated.
   */
  CandidateInfo initialHarness(TaskRef task, String form);

  /** M new candidates from the proposer, each stored and validated; also writes the archive tree. */
  List<CandidateInfo> propose(ProposeRequest request);
}
