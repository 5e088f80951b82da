package whale.task;

/**
 * A problem as the task holds it, with its reference answer. Harnesses never see this type: they get
 * {@link #toProblem()}.
 */
public record TaskProblem(String id, String question, String answer) {
  /** What a harness sees: id and question, no answer. */
  public Problem toProblem() {
    return new Problem(id, question);
  }
}
