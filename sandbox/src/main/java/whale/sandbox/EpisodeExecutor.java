package whale.sandbox;

import java.util.List;
import java.util.function.Consumer;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.model.Generator;
import whale.task.Task;
import whale.task.TaskProblem;

/**
 * Runs the episodes of one harness (given as source) against a model: in sandbox processes
 * ({@link SandboxExecutor}, what the activities use) or in this JVM ({@link InProcessExecutor}, for
 * the benchmark comparison only). Results are in episode order with the task's rewards.
 */
public interface EpisodeExecutor extends AutoCloseable {
  /**
   * @param progress called now and then from the calling thread with a line of progress (heartbeats)
   * @throws IllegalArgumentException when the harness does not compile
   * @throws IllegalStateException when the model fails (the whole run fails, as in-process)
   */
  List<EpisodeResult> run(Generator model, Task task, String harnessSource, List<TaskProblem> problems,
      int samples, long seed, EpisodeRunner.Config config, Consumer<String> progress);

  /**
   * Compiles and checks {@code harnessSource} against the allow-list without running it: null when it
   * compiles, else the diagnostics ("line L:C: message" per line) or why compilation was stopped.
   */
  String checkHarness(String harnessSource);

  @Override
  default void close() {}
}
