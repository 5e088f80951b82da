package whale.sandbox;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import whale.harness.CompiledHarness;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.HarnessCompilationException;
import whale.harness.HarnessCompiler;
import whale.model.Generator;
import whale.task.Task;
import whale.task.TaskProblem;

/**
 * Episodes in the calling JVM: the harness class is loaded here. Only for the benchmark comparison
 * and for tests of the runner; activities use {@link SandboxExecutor}.
 */
public final class InProcessExecutor implements EpisodeExecutor {
  private final HarnessCompiler compiler;
  private final Map<String, CompiledHarness> cache = new ConcurrentHashMap<>();

  public InProcessExecutor(HarnessCompiler compiler) {
    this.compiler = compiler;
  }

  /** In this JVM (benchmark comparison only): unbounded, unlike {@link SandboxExecutor#checkHarness}. */
  @Override
  public String checkHarness(String harnessSource) {
    HarnessCompiler.Result r = compiler.tryCompile(harnessSource);
    return r.ok() ? null : r.errorText();
  }

  @Override
  public List<EpisodeResult> run(Generator model, Task task, String harnessSource, List<TaskProblem> problems,
      int samples, long seed, EpisodeRunner.Config config, Consumer<String> progress) {
    CompiledHarness h = cache.computeIfAbsent(harnessSource, src -> {
      try {
        return compiler.compile(src);
      } catch (HarnessCompilationException e) {
        throw new IllegalArgumentException("harness does not compile: " + e.getMessage(), e);
      }
    });
    EpisodeRunner runner = new EpisodeRunner(model, task, config);
    int[] batches = {0};
    runner.setBatchListener((ids, requests) -> {
      batches[0]++;
      progress.accept("model batch " + batches[0] + " of " + requests.size());
    });
    return runner.run(h, problems, samples, seed);
  }
}
