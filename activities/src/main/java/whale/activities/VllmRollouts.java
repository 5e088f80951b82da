package whale.activities;

import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import whale.model.Generator;
import whale.model.hf.HfConfig;
import whale.model.hf.HfModel;
import whale.model.hf.HfTokenizer;
import whale.model.vllm.VllmClient;
import whale.model.vllm.VllmException;
import whale.model.vllm.VllmGenerator;
import whale.model.vllm.VllmServer;
import whale.store.ArtifactStore;
import whale.workflows.activities.Rollouts;

/**
 * A worker's vLLM servers and the hand-off of checkpoints to them: which adapter a checkpoint is on
 * which server, loaded when missing and checked before anything is sampled with it.
 *
 * <p>The name of an RSFT step's adapter on a server is derived from its checkpoint reference, a
 * sha256 of the checkpoint's bytes: a name is never reused for other weights, so a server can hold
 * no stale entry under it (a reload under an old name is what served stale prefix-cache entries in
 * vllm#42125), and two runs or retries that reach the same checkpoint share one adapter. The
 * adapter directory is the checkpoint's unpacked copy in the artifact store (PEFT's two files at its
 * top), which the server must be able to read.
 *
 * <p>The probe: before the first request with a checkpoint on a server (per process, and again
 * after the server lost it, e.g. restarted), a fixed prompt is completed greedily with
 * log-probabilities, and whale's own model of the same checkpoint scores the same tokens; the
 * largest difference must be within {@link Rollouts#probeTolerance}. A mismatch fails the activity
 * for good: sampling on it would train on another model's rollouts. The base gets the same check,
 * which is how a server serving another model is refused.
 */
public final class VllmRollouts implements AutoCloseable {
  static final String PROBE_PROMPT = "The capital of France is";
  static final int PROBE_TOKENS = 8;
  /** Most whale adapters a worker keeps loaded on a server by default; older ones no request uses are unloaded. */
  static final int MAX_ADAPTERS = Integer.getInteger("whale.vllm.maxAdapters", 4);

  private final List<String> workerServers;
  private final List<VllmServer> managed;
  /** server url + " " + model name that passed the probe in this process */
  private final Set<String> checked = ConcurrentHashMap.newKeySet();
  /** adapters this process loaded, per server url, oldest first */
  private final Map<String, List<String>> loaded = new ConcurrentHashMap<>();
  /** adapters in use by a running activity, with counts */
  private final Map<String, Integer> inUse = new ConcurrentHashMap<>();
  private final Map<Path, BaseFiles> bases = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong retokenized = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong sampled = new java.util.concurrent.atomic.AtomicLong();
  /** the largest probe difference seen, for the note and the tests */
  private volatile double worstProbe;

  private final int maxAdapters;

  private VllmRollouts(List<String> workerServers, List<VllmServer> managed, int maxAdapters) {
    this.workerServers = List.copyOf(workerServers);
    this.managed = List.copyOf(managed);
    this.maxAdapters = maxAdapters;
  }

  /** Servers someone else runs ({@code whale worker --vllm-servers}); empty when none. */
  public static VllmRollouts attach(List<String> urls) {
    return attach(urls, MAX_ADAPTERS);
  }

  /** As {@link #attach(List)}, keeping at most {@code maxAdapters} of this worker's adapters loaded per server. */
  public static VllmRollouts attach(List<String> urls, int maxAdapters) {
    return new VllmRollouts(urls, List.of(), maxAdapters);
  }

  /** A server this worker started; it is stopped with {@link #close}. */
  public static VllmRollouts managed(VllmServer server) {
    return new VllmRollouts(List.of(server.url()), List.of(server), MAX_ADAPTERS);
  }

  public double worstProbe() {
    return worstProbe;
  }

  /** Completions sampled on vLLM so far, and how many of them re-tokenize to other ids ({@link VllmGenerator#retokenization}). */
  public long[] retokenization() {
    return new long[] {retokenized.get(), sampled.get()};
  }

  /** whale's own log-probabilities of a completion's tokens under the checkpoint ({@link HfModel#tokenLogProbs}). */
  public interface Scorer {
    double[] logProbs(int[] prompt, int[] completion);
  }

  /**
   * Runs {@code fn} with a generator that samples {@code checkpointRef} on the run's servers.
   * {@code scorer} scores the probe with whale's own copy of the checkpoint (only when a probe runs).
   */
  public <T> T with(ArtifactStore store, String checkpointRef, Rollouts spec, Scorer scorer,
      Function<Generator, T> fn) {
    List<String> urls = spec.servers().isEmpty() ? workerServers : spec.servers();
    if (urls.isEmpty()) {
      throw ApplicationFailure.newNonRetryableFailure("rollouts.backend is vllm, but the spec names "
          + "no rollouts.servers and this worker runs none (start it with --vllm-serve or "
          + "--vllm-servers URL,...)", "NoVllmServer");
    }
    CheckpointKind kind = CheckpointKind.of(store.path(checkpointRef));
    if (!kind.huggingFace()) {
      throw ApplicationFailure.newNonRetryableFailure("rollouts.backend vllm samples Hugging Face "
          + "models; " + checkpointRef + " is a builtin model's checkpoint", "InvalidSpec");
    }
    Path baseDir;
    String adapterName = null;
    Path adapterDir = null;
    if (kind == CheckpointKind.HF_BASE) {
      baseDir = HfPolicy.baseDir(store, checkpointRef);
    } else {
      adapterDir = HfPolicy.checkpointDir(store, checkpointRef);
      if (!java.nio.file.Files.exists(adapterDir.resolve("adapter_config.json"))) {
        throw ApplicationFailure.newNonRetryableFailure("rollouts.backend vllm hands LoRA adapters "
            + "to the servers; " + checkpointRef + " is a full fine-tune's checkpoint "
            + "(rsft.finetune full is refused with vllm)", "InvalidSpec");
      }
      baseDir = HfPolicy.stepBaseDir(adapterDir);
      adapterName = adapterName(checkpointRef);
    }
    Duration timeout = Duration.ofSeconds(spec.timeoutOrDefault());
    List<VllmClient> clients = new ArrayList<>();
    for (String u : urls) {
      clients.add(new VllmClient(u, timeout));
    }
    BaseFiles files = bases.computeIfAbsent(baseDir, BaseFiles::read);
    // every server must serve the same base under one name; the probe checks its weights
    VllmClient.ServedModel base = baseModel(clients.get(0));
    Guard guard = new Guard(adapterName, adapterDir, base.id(), files.tokenizer(),
        spec.toleranceOrDefault(), scorer);
    String served = adapterName == null ? base.id() : adapterName;
    // the server's context may be set below the model's (--max-model-len)
    int context = base.maxModelLen() > 0 ? Math.min(files.maxPositions(), base.maxModelLen())
        : files.maxPositions();
    if (adapterName != null) {
      inUse.merge(adapterName, 1, Integer::sum); // not unloaded while this activity samples with it
    }
    try (VllmGenerator g = new VllmGenerator(clients, served, files.tokenizer(), context, HfModel.LINE,
        files.template(), guard, spec.concurrencyOrDefault(), timeout)) {
      // every server checked before the first rollout, here rather than inside an episode, whose
      // failures the episode runner reports as the episode's; a restart later is caught per request
      for (VllmClient c : clients) {
        guard.ready(c);
      }
      T out = fn.apply(g);
      int[] r = g.retokenization();
      retokenized.addAndGet(r[0]);
      sampled.addAndGet(r[1]);
      return out;
    } finally {
      if (adapterName != null) {
        inUse.merge(adapterName, -1, Integer::sum);
      }
    }
  }

  /** The adapter's name on a server: unique to the checkpoint's content. */
  public static String adapterName(String checkpointRef) {
    String hex = checkpointRef.substring(checkpointRef.indexOf(':') + 1);
    return "whale-" + hex.substring(0, 24);
  }

  /** The base model a server serves (vLLM serves one; adapters list it as their parent). */
  private static VllmClient.ServedModel baseModel(VllmClient c) {
    for (VllmClient.ServedModel m : c.models()) {
      if (m.parent() == null) {
        return m;
      }
    }
    throw new VllmException("vLLM server " + c.url() + " lists no base model in /v1/models", false, null);
  }

  /**
   * What a base directory gives every request, read once per worker: the tokenizer, the context,
   * and whale's own chat template (prompts are rendered here, never on the server).
   */
  private record BaseFiles(HfTokenizer tokenizer, int maxPositions, whale.chat.ChatTemplate template) {
    static BaseFiles read(Path dir) {
      try {
        return new BaseFiles(HfTokenizer.load(dir), HfConfig.read(dir).maxPositions(),
            whale.chat.ChatTemplate.ofOrMissing(dir));
      } catch (IOException e) {
        throw new UncheckedIOException("model.path " + dir + ": " + e.getMessage(), e);
      }
    }
  }

  /** Loads and probes a checkpoint on a server once; forgets it when the server lost it. */
  private final class Guard implements VllmGenerator.Adapters {
    final String adapter; // null: the base
    final Path adapterDir;
    final HfTokenizer tokenizer;
    final double tolerance;
    final Scorer scorer;
    final String served; // the base's name on the servers

    Guard(String adapter, Path adapterDir, String served, HfTokenizer tokenizer, double tolerance,
        Scorer scorer) {
      this.adapter = adapter;
      this.adapterDir = adapterDir;
      this.served = served;
      this.tokenizer = tokenizer;
      this.tolerance = tolerance;
      this.scorer = scorer;
    }

    @Override
    public void ready(VllmClient server) {
      String model = adapter == null ? served : adapter;
      String key = server.url() + " " + model;
      if (checked.contains(key)) {
        return;
      }
      synchronized (this) {
        if (checked.contains(key)) {
          return;
        }
        if (adapter != null) {
          load(server);
        }
        probe(server, model);
        checked.add(key);
      }
    }

    @Override
    public void lost(VllmClient server) {
      checked.removeIf(k -> k.startsWith(server.url() + " "));
      loaded.remove(server.url());
    }

    private void load(VllmClient server) {
      boolean there = server.models().stream().anyMatch(m -> m.id().equals(adapter));
      if (!there) {
        try {
          server.loadAdapter(adapter, adapterDir.toAbsolutePath().toString());
        } catch (VllmException e) {
          if (e.transientFailure()) {
            throw e;
          }
          // 4xx: the server cannot read or use the directory; every retry would fail the same way
          throw ApplicationFailure.newNonRetryableFailureWithCause("vLLM server " + server.url()
              + " could not load the adapter " + adapterDir.toAbsolutePath() + ": " + e.getMessage(),
              "VllmAdapter", e);
        }
      }
      List<String> mine = loaded.computeIfAbsent(server.url(), u -> Collections.synchronizedList(new ArrayList<>()));
      mine.remove(adapter);
      mine.add(adapter);
      unloadOld(server, mine);
    }

    /** Unloads the oldest adapters this process loaded that no running activity samples with. */
    private void unloadOld(VllmClient server, List<String> mine) {
      synchronized (mine) {
        var it = mine.iterator();
        int excess = mine.size() - maxAdapters;
        while (excess > 0 && it.hasNext()) {
          String old = it.next();
          if (inUse.getOrDefault(old, 0) > 0) {
            continue;
          }
          try {
            server.unloadAdapter(old);
          } catch (VllmException e) {
            // already gone (a restart, another worker): nothing to free
          }
          checked.remove(server.url() + " " + old);
          it.remove();
          excess--;
        }
      }
    }

    private void probe(VllmClient server, String model) {
      int[] prompt = tokenizer.promptIds(PROBE_PROMPT);
      VllmClient.Sample s = server.complete(new VllmClient.Call(model, prompt, PROBE_TOKENS, 0.0, 0,
          0, List.of(), true));
      if (s.tokenIds().length == 0) {
        throw new VllmException("vLLM server " + server.url() + " returned no probe tokens for "
            + model, false, null);
      }
      double[] ours;
      try {
        ours = scorer.logProbs(prompt, s.tokenIds());
      } catch (RuntimeException e) {
        // e.g. token ids beyond whale's vocabulary: another model's tokenizer
        throw ApplicationFailure.newNonRetryableFailureWithCause("vLLM server " + server.url()
            + " failed the probe: whale cannot score its greedy tokens " + java.util.Arrays.toString(s.tokenIds())
            + " under the run's model (" + e.getMessage() + "): it serves another base model", "VllmProbeMismatch", e);
      }
      double worst = 0;
      for (int i = 0; i < ours.length; i++) {
        worst = Math.max(worst, Math.abs(ours[i] - s.logprobs()[i]));
      }
      worstProbe = Math.max(worstProbe, worst);
      if (!(worst <= tolerance)) {
        String what = adapter == null
            ? "its base model '" + model + "' is not the run's base model"
            : "the adapter " + adapterDir.toAbsolutePath() + " as loaded there is not the checkpoint whale trained";
        throw ApplicationFailure.newNonRetryableFailure(String.format(Locale.ROOT,
            "vLLM server %s failed the probe: log-probabilities of %d greedy tokens differ from "
                + "whale's by up to %.4f nats (tolerance %.4f): %s", server.url(), ours.length, worst,
            tolerance, what), "VllmProbeMismatch");
      }
    }
  }

  @Override
  public void close() {
    managed.forEach(VllmServer::close);
    bases.values().forEach(b -> b.tokenizer().close());
  }

  /** For the tests: the adapters this process keeps loaded on a server, oldest first. */
  List<String> loadedOn(String url) {
    return List.copyOf(loaded.getOrDefault(url, List.of()));
  }
}
