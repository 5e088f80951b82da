package whale.activities;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import whale.harness.CompiledHarness;
import whale.harness.HarnessCompilationException;
import whale.harness.HarnessCompiler;
import whale.model.LanguageModel;
import whale.store.ArtifactStore;
import whale.task.MathTask;
import whale.task.Task;
import whale.workflows.activities.TaskRef;

/**
 * What a worker process shares between its activities: the artifact store, the tasks, compiled
 * harnesses and a small cache of loaded checkpoints (by content reference, so never stale).
 */
public final class ActivityRuntime {
  private static final int MODEL_CACHE = 4;

  private final ArtifactStore store;
  private final HarnessCompiler compiler = new HarnessCompiler();
  private final Map<TaskRef, Task> tasks = new ConcurrentHashMap<>();
  private final Map<String, CompiledHarness> harnesses = new ConcurrentHashMap<>();
  private final LinkedHashMap<String, Lease> models = new LinkedHashMap<>(16, 0.75f, true);

  private ActivityRuntime(ArtifactStore store) {
    this.store = store;
  }

  public static ActivityRuntime open(Path artifactRoot) {
    System.setProperty("ai.djl.offline", "true");
    return new ActivityRuntime(new ArtifactStore(artifactRoot));
  }

  public ArtifactStore store() {
    return store;
  }

  public HarnessCompiler compiler() {
    return compiler;
  }

  public Task task(TaskRef ref) {
    return tasks.computeIfAbsent(ref, r -> switch (r.name()) {
      case MathTask.NAME -> new MathTask(r.dataSeed(), r.weightProblems(), r.harnessProblems(),
          r.testProblems());
      default -> throw new IllegalArgumentException("unknown task '" + r.name() + "'");
    });
  }

  /** The compiled harness of a stored source; a source that does not compile is a bad request. */
  public CompiledHarness harness(String sourceRef) {
    return harnesses.computeIfAbsent(sourceRef, ref -> {
      try {
        return compiler.compile(store.getString(ref));
      } catch (HarnessCompilationException e) {
        throw new IllegalArgumentException("harness " + ref + " does not compile: "
            + e.getMessage(), e);
      }
    });
  }

  /** A fresh, private copy of a checkpoint, for training (the caller closes it). */
  public LanguageModel loadForTraining(String checkpointRef) {
    try {
      return LanguageModel.load(store.path(checkpointRef));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot load checkpoint " + checkpointRef, e);
    }
  }

  /** Runs {@code fn} with a shared, cached copy of a checkpoint, for sampling only. */
  public <T> T withModel(String checkpointRef, Function<LanguageModel, T> fn) {
    Lease lease;
    synchronized (models) {
      lease = models.get(checkpointRef);
      if (lease == null) {
        lease = new Lease(loadForTraining(checkpointRef));
        models.put(checkpointRef, lease);
        evict();
      }
      lease.users++;
    }
    try {
      return fn.apply(lease.model);
    } finally {
      synchronized (models) {
        lease.users--;
        if (lease.evicted && lease.users == 0) {
          lease.model.close();
        }
      }
    }
  }

  private void evict() {
    var it = models.entrySet().iterator();
    while (models.size() > MODEL_CACHE && it.hasNext()) {
      Lease old = it.next().getValue();
      it.remove();
      old.evicted = true;
      if (old.users == 0) {
        old.model.close(); // native memory: close as soon as nobody samples from it
      }
    }
  }

  private static final class Lease {
    final LanguageModel model;
    int users;
    boolean evicted;

    Lease(LanguageModel model) {
      this.model = model;
    }
  }
}
