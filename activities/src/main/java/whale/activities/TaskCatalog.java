package whale.activities;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import whale.harness.TemplateLibrary;
import whale.task.math.MathTemplates;
import whale.task.searchqa.SearchQaTemplates;
import whale.store.ArtifactStore;
import whale.task.math.MathFileTask;
import whale.task.math.MathTask;
import whale.task.Task;
import whale.task.chess.ChessTask;
import whale.task.chess.ChessTemplates;
import whale.task.searchqa.AnswerJudge;
import whale.task.searchqa.LlmJudge;
import whale.task.searchqa.SearchQaTask;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.TaskRef;

/**
 * The tasks whale ships: how to build each from a {@link TaskRef} and each one's built-in harness
 * templates. The one place a new task is registered.
 */
public final class TaskCatalog {
  private TaskCatalog() {}

  /** Task names, in the order {@code whale tasks} lists them. */
  public static List<String> names() {
    return List.of(MathTask.NAME, ChessTask.NAME, SearchQaTask.NAME);
  }

  /** Builds the task's splits without an artifact store (a searchqa corpus is indexed in memory). */
  public static Task create(TaskRef ref) {
    return create(ref, null);
  }

  /**
   * Builds the task's splits (built-in generator, or the dataset files the ref names).
   *
   * @param store where derived data is cached (the searchqa corpus index); null: nothing cached
   */
  public static Task create(TaskRef ref, ArtifactStore store) {
    return switch (ref.name()) {
      case MathTask.NAME -> ref.builtin()
          ? new MathTask(ref.dataSeed(), ref.weightProblems(), ref.harnessProblems(), ref.testProblems())
          : MathFileTask.load(MathFileTask.Format.of(ref.format()), path(ref.trainFile()), path(ref.testFile()),
              ref.dataSeed(), ref.weightProblems(), ref.harnessProblems(), ref.testProblems());
      case SearchQaTask.NAME -> {
        SearchQaTask t = ref.builtin()
            ? SearchQaTask.builtin(ref.dataSeed(), ref.weightProblems(), ref.harnessProblems(), ref.testProblems())
            : loadSearchQa(ref, store);
        yield ref.judge() == null ? t : SearchQaTask.withJudge(t, judge(ref.judge()));
      }
      case ChessTask.NAME -> {
        if (ref.builtin()) {
          yield ChessTask.builtin(ref.dataSeed(), ref.weightProblems(), ref.harnessProblems(), ref.testProblems());
        }
        if (!"lichess".equals(ref.format())) {
          throw new IllegalArgumentException("chess: unknown data.format '" + ref.format()
              + "'; available: builtin, lichess");
        }
        yield ChessTask.lichess(path(ref.trainFile()), path(ref.testFile()), ref.dataSeed(),
            ref.weightProblems(), ref.harnessProblems(), ref.testProblems());
      }
      default -> throw new IllegalArgumentException("unknown task '" + ref.name() + "'; available: "
          + String.join(", ", names()));
    };
  }

  private static SearchQaTask loadSearchQa(TaskRef ref, ArtifactStore store) {
    if (!"jsonl".equals(ref.format())) {
      throw new IllegalArgumentException("searchqa reads data.format jsonl, got '" + ref.format() + "'");
    }
    if (ref.corpusFile() == null) {
      throw new IllegalArgumentException("data.corpusFile: searchqa with data.format jsonl needs the corpus "
          + "the search tool indexes");
    }
    return SearchQaTask.load(path(ref.trainFile()), path(ref.testFile()), path(ref.corpusFile()),
        ref.dataSeed(), ref.weightProblems(), ref.harnessProblems(), ref.testProblems(), store, null);
  }

  /** The LLM judge a spec names; its API key comes from the worker's environment. */
  static AnswerJudge judge(ExperimentSpec.JudgeSpec j) {
    String key = j.apiKeyEnv().isBlank() ? null : System.getenv(j.apiKeyEnv());
    return new LlmJudge(j.baseUrl(), j.model(), key, Duration.ofSeconds(j.timeoutSeconds()));
  }

  private static Path path(String file) {
    return file == null ? null : Path.of(file);
  }

  /** The task's built-in proposer and its starting harness h0. */
  public static TemplateLibrary templates(String task) {
    return switch (task) {
      case MathTask.NAME -> new MathTemplates();
      case ChessTask.NAME -> new ChessTemplates();
      case SearchQaTask.NAME -> new SearchQaTemplates();
      default -> throw new IllegalArgumentException("unknown task '" + task + "'; available: "
          + String.join(", ", names()));
    };
  }
}
