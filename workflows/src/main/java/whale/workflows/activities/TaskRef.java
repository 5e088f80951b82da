package whale.workflows.activities;

import whale.workflows.ExperimentSpec;

/** Which task and which generated data: enough for any worker to rebuild the same splits. */
public record TaskRef(String name, long dataSeed, int weightProblems, int harnessProblems,
    int testProblems) {
  public static TaskRef of(ExperimentSpec spec) {
    var d = spec.data();
    return new TaskRef(spec.task(), d.seed(), d.weightProblems(), d.harnessProblems(),
        d.testProblems());
  }
}
