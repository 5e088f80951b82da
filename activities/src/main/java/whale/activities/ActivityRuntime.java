package whale.activities;

import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import whale.harness.HarnessCompiler;
import whale.model.NativeHeap;
import whale.model.Generator;
import whale.model.LanguageModel;
import whale.sandbox.EpisodeExecutor;
import whale.sandbox.InProcessExecutor;
import whale.sandbox.SandboxExecutor;
import whale.sandbox.SandboxProcess;
import whale.store.ArtifactStore;
import whale.task.Task;
import whale.workflows.activities.TaskRef;

/**
 * What a worker process shares between its activities: the artifact store, the tasks, compiled
 * harnesses and a small cache of loaded checkpoints (by content reference, so never stale).
 */
public final class ActivityRuntime {
  /** Most checkpoints cached for sampling. */
  private static final int MODEL_CACHE = 4;
  /**
   * Most native bytes the cached checkpoints hold of their own ({@code whale.modelCacheMb},
   * default 768): LoRA checkpoints share their base and cost megabytes, but a full fine-tune's
   * is a whole model (538 MB for SmolLM2-135M in float32), so by default one of those is kept.
   */
  private static final long MODEL_CACHE_BYTES =
      Long.getLong("whale.modelCacheMb", 768) * 1024 * 1024;

  private final ArtifactStore store;
  private final HarnessCompiler compiler = new HarnessCompiler();
  private final Map<TaskRef, Task> tasks = new ConcurrentHashMap<>();
  private final LinkedHashMap<String, Lease> models = new LinkedHashMap<>(16, 0.75f, true);

  private final Mode mode;
  private EpisodeExecutor episodes;

  /**
   * Where harness episodes run: {@link #SANDBOX} (separate JVM processes, the default and what a
   * worker uses) or {@link #IN_PROCESS} (this JVM; only for the benchmark comparison).
   */
  public enum Mode { SANDBOX, IN_PROCESS }

  private ActivityRuntime(ArtifactStore store, Mode mode) {
    this.store = store;
    this.mode = mode;
  }

  /** A runtime whose episodes run in a pool of sandbox processes. */
  public static ActivityRuntime open(Path artifactRoot) {
    return open(artifactRoot, Mode.SANDBOX);
  }

  public static ActivityRuntime open(Path artifactRoot, Mode mode) {
    return open(new ArtifactStore(artifactRoot), mode);
  }

  /** A runtime on a store already opened (a directory, or S3 with this machine's cache). */
  public static ActivityRuntime open(ArtifactStore store) {
    return open(store, Mode.SANDBOX);
  }

  public static ActivityRuntime open(ArtifactStore store, Mode mode) {
    System.setProperty("ai.djl.offline", "true");
    SandboxProcess.onKill(() -> WhaleMetrics.sandboxKills().increment());
    return new ActivityRuntime(store, mode);
  }

  public Mode mode() {
    return mode;
  }

  /**
   * The episode executor, started on first use. Sandbox mode: a pool of
   * {@code whale.sandbox.pool} (default 2) processes of {@code whale.sandbox.heapMb} (default 256) MiB
   * heap, killed when this JVM exits; an episode run takes {@code whale.sandbox.shards} (default 1)
   * of them, so that two runs (two evaluations, or an evaluation and an RSFT step's rollouts) go at
   * once instead of one waiting for the other's sandboxes.
   */
  public synchronized EpisodeExecutor episodes() {
    if (episodes == null) {
      if (mode == Mode.IN_PROCESS) {
        episodes = new InProcessExecutor(compiler);
      } else {
        SandboxExecutor ex = SandboxExecutor.create(Integer.getInteger("whale.sandbox.pool", 2),
            Integer.getInteger("whale.sandbox.heapMb", 256), Integer.getInteger("whale.sandbox.shards", 1));
        Runtime.getRuntime().addShutdownHook(new Thread(ex::close, "whale-sandbox-shutdown"));
        episodes = ex;
      }
    }
    return episodes;
  }

  public ArtifactStore store() {
    return store;
  }

  public HarnessCompiler compiler() {
    return compiler;
  }

  /**
   * The task a ref names, built once per process. A dataset the loader rejects (a malformed line, a
   * missing field, a bad FEN: every such problem is an {@link IllegalArgumentException}, often a
   * {@link whale.task.Jsonl.MalformedFileException}) fails the activity for good: a retry reads the
   * same bytes, and the message ("file:line: reason") is what the user must see.
   */
  public Task task(TaskRef ref) {
    try {
      return tasks.computeIfAbsent(ref, r -> TaskCatalog.create(r, store));
    } catch (IllegalArgumentException e) {
      throw ApplicationFailure.newNonRetryableFailureWithCause(e.getMessage(),
          e.getClass().getName(), e);
    }
  }

  /** The stored source of a harness (what a sandbox compiles and runs). */
  public String harnessSource(String sourceRef) {
    return store.getString(sourceRef);
  }

  /** A fresh, private copy of a checkpoint, for training (the caller closes it). */
  public LanguageModel loadForTraining(String checkpointRef) {
    try {
      return LanguageModel.load(store.path(checkpointRef));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot load checkpoint " + checkpointRef, e);
    }
  }

  private volatile VllmRollouts vllm = VllmRollouts.attach(java.util.List.of());

  /** The vLLM servers this worker runs or was given (closed with the worker). */
  public void vllm(VllmRollouts servers) {
    this.vllm = servers;
  }

  public VllmRollouts vllm() {
    return vllm;
  }

  /**
   * Runs {@code fn} with what samples a checkpoint's episodes: the vLLM servers when the episodes
   * say so (the probe scored on this worker's cached copy), else the cached copy itself.
   */
  public <T> T withSampler(String checkpointRef, whale.workflows.activities.EpisodeSettings episodes,
      Function<Generator, T> fn) {
    if (!episodes.onVllm()) {
      return withGenerator(checkpointRef, fn);
    }
    return vllm.with(store, checkpointRef, episodes.rollouts(), (prompt, completion) ->
        withGenerator(checkpointRef, g -> ((whale.model.hf.HfModel) g).tokenLogProbs(prompt, completion)), fn);
  }

  /** Runs {@code fn} with a shared, cached copy of a builtin checkpoint, for sampling only. */
  public <T> T withModel(String checkpointRef, Function<LanguageModel, T> fn) {
    return withGenerator(checkpointRef, g -> fn.apply((LanguageModel) g));
  }

  /**
   * Runs {@code fn} with a shared, cached copy of a checkpoint, builtin or Hugging Face (see
   * {@link HfPolicy}), for sampling only.
   */
  public <T> T withGenerator(String checkpointRef, Function<Generator, T> fn) {
    Lease lease;
    synchronized (models) {
      lease = models.get(checkpointRef);
      if (lease == null) {
        lease = HfPolicy.isHf(store, checkpointRef)
            ? new Lease(HfPolicy.loadForSampling(store, checkpointRef))
            : new Lease(loadForTraining(checkpointRef));
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
          lease.close();
        }
      }
    }
  }

  /**
   * Stops the sandbox processes no episode run holds (sandbox mode; the pool starts fresh ones on
   * demand). Returns how many.
   */
  public int stopIdleSandboxes() {
    EpisodeExecutor ex;
    synchronized (this) {
      ex = episodes;
    }
    return ex instanceof SandboxExecutor s ? s.pool().stopIdle() : 0;
  }

  /**
   * Closes every cached model nobody is sampling from, and gives the freed native memory back. For
   * a step about to hold several model-sized buffers of its own; the cache refills on demand.
   */
  public void dropIdleModels() {
    synchronized (models) {
      var it = models.entrySet().iterator();
      while (it.hasNext()) {
        Lease l = it.next().getValue();
        if (l.users == 0) {
          it.remove();
          l.evicted = true;
          l.close();
        }
      }
    }
    NativeHeap.trim();
  }

  /** Least recently used first, never the newest entry (the one about to be used). */
  private void evict() {
    long bytes = 0;
    for (Lease l : models.values()) {
      bytes += l.bytes;
    }
    var it = models.entrySet().iterator();
    while ((models.size() > MODEL_CACHE || bytes > MODEL_CACHE_BYTES) && models.size() > 1) {
      Lease old = it.next().getValue();
      it.remove();
      bytes -= old.bytes;
      old.evicted = true;
      if (old.users == 0) {
        old.close(); // native memory: close as soon as nobody samples from it
      }
    }
  }

  private static final class Lease {
    final Generator model;
    final AutoCloseable closer;
    final long bytes;
    int users;
    boolean evicted;

    <M extends Generator & AutoCloseable> Lease(M model) {
      this.model = model;
      this.closer = model;
      this.bytes = model.residentBytes();
    }

    void close() {
      try {
        closer.close();
      } catch (Exception e) {
        throw new IllegalStateException("cannot close a cached model", e);
      }
    }
  }
}
