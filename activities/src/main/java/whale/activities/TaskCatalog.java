package whale.activities;

import java.util.List;
import whale.harness.TemplateLibrary;
import whale.harness.TemplateProposer;
import whale.task.MathTask;
import whale.task.Task;
import whale.task.chess.ChessTask;
import whale.task.chess.ChessTemplates;
import whale.workflows.activities.TaskRef;

/**
 * The tasks whale ships: how to build each from a {@link TaskRef} and each one's built-in harness
 * templates. The one place a new task is registered.
 */
public final class TaskCatalog {
  private TaskCatalog() {}

  /** Task names, in the order {@code whale tasks} lists them. */
  public static List<String> names() {
    return List.of(MathTask.NAME, ChessTask.NAME);
  }

  /** Builds the task's splits (built-in generator, or the dataset files the ref names). */
  public static Task create(TaskRef ref) {
    return switch (ref.name()) {
      case MathTask.NAME -> new MathTask(ref.dataSeed(), ref.weightProblems(), ref.harnessProblems(),
          ref.testProblems());
      case ChessTask.NAME -> ChessTask.of(ref);
      default -> throw new IllegalArgumentException("unknown task '" + ref.name() + "'; available: "
          + String.join(", ", names()));
    };
  }

  /** The task's built-in proposer and its starting harness h0. */
  public static TemplateLibrary templates(String task) {
    return switch (task) {
      case MathTask.NAME -> new TemplateProposer();
      case ChessTask.NAME -> new ChessTemplates();
      default -> throw new IllegalArgumentException("unknown task '" + task + "'; available: "
          + String.join(", ", names()));
    };
  }
}
