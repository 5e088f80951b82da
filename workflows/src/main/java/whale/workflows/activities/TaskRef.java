package whale.workflows.activities;

import com.fasterxml.jackson.annotation.JsonInclude;
import whale.workflows.ExperimentSpec;

/**
 * Which task and which data: enough for any worker to rebuild the same splits. For built-in data
 * the file fields are null (and left out of JSON, so request hashes of built-in runs never change);
 * for loaded data they name the files, which every worker must be able to read at the same path.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TaskRef(String name, long dataSeed, int weightProblems, int harnessProblems,
    int testProblems, String format, String trainFile, String testFile, String corpusFile,
    ExperimentSpec.JudgeSpec judge) {

  /** Built-in generated data. */
  public TaskRef(String name, long dataSeed, int weightProblems, int harnessProblems,
      int testProblems) {
    this(name, dataSeed, weightProblems, harnessProblems, testProblems, null, null, null, null, null);
  }

  /** Dataset files, exact-match verification only. */
  public TaskRef(String name, long dataSeed, int weightProblems, int harnessProblems, int testProblems,
      String format, String trainFile, String testFile, String corpusFile) {
    this(name, dataSeed, weightProblems, harnessProblems, testProblems, format, trainFile, testFile,
        corpusFile, null);
  }

  public static TaskRef of(ExperimentSpec spec) {
    var d = spec.data();
    boolean builtin = "builtin".equals(d.format());
    return new TaskRef(spec.task(), d.seed(), d.weightProblems(), d.harnessProblems(),
        d.testProblems(), builtin ? null : d.format(), d.trainFile(), d.testFile(), d.corpusFile(),
        d.judge());
  }

  /** True when the task generates its own data. */
  public boolean builtin() {
    return format == null;
  }
}
