package whale.workflows.activities;

import io.temporal.activity.ActivityInterface;
import java.util.List;

/** Harness code work, on task queue {@code whale-harness}: writing and compiling candidates. */
@ActivityInterface
public interface HarnessActivities {
  String TASK_QUEUE = "whale-harness";

  /** The task's starting harness h0, stored and validated. */
  CandidateInfo initialHarness(TaskRef task);

  /** M new candidates from the proposer, each stored and validated; also writes the archive tree. */
  List<CandidateInfo> propose(ProposeRequest request);
}
