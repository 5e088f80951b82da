package whale.model.vllm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import whale.chat.ChatTemplate;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.ModelLimits;
import whale.model.SamplingParams;
import whale.model.hf.HfTokenizer;

/**
 * Completions sampled by vLLM servers, with the same contract as {@code HfModel.generate}: whale
 * renders and tokenizes every prompt itself and sends token ids (the server never sees text it
 * could tokenize differently); a plain completion stops after the first stop string (kept in the
 * text), a chat turn at EOS; a chat that does not fit the context fails that call alone, a plain
 * prompt loses its start. Each request carries its own seed, so a row's completion does not depend
 * on what else is in flight.
 *
 * <p>Requests go out concurrently, at most {@code maxConcurrent} at a time, spread round-robin over
 * the servers (vLLM batches what arrives together). A transient failure (connection refused, a
 * timeout, 5xx) is retried with backoff on the next server until {@code retryFor} has passed; a
 * 404 for the model means the server lost the adapter (restarted): the {@link Adapters} hook loads
 * and checks it again before the retry.
 */
public final class VllmGenerator implements Generator, AutoCloseable {
  /** Makes sure a server serves {@code model} (an adapter loaded and checked) before a request. */
  public interface Adapters {
    /** Called before each request to {@code server}; cheap once it has succeeded for that server. */
    void ready(VllmClient server);

    /** The server answered 404 for the model: forget that it was ready there. */
    void lost(VllmClient server);

    Adapters NONE = new Adapters() {
      @Override
      public void ready(VllmClient server) {}

      @Override
      public void lost(VllmClient server) {}
    };
  }

  private final List<VllmClient> servers;
  private final String model;
  private final HfTokenizer tokenizer;
  private final int maxPositions;
  private final List<String> stopStrings;
  private final ChatTemplate chatTemplate;
  private final Adapters adapters;
  private final Semaphore inFlight;
  private final Duration retryFor;
  private final ExecutorService pool;
  private final AtomicInteger next = new AtomicInteger();
  private volatile whale.model.SampledTokens sampled;
  private final AtomicInteger completions = new AtomicInteger();
  private final AtomicInteger retokenizedOtherwise = new AtomicInteger();

  public VllmGenerator(List<VllmClient> servers, String model, HfTokenizer tokenizer,
      int maxPositions, List<String> stopStrings, ChatTemplate chatTemplate, Adapters adapters,
      int maxConcurrent, Duration retryFor) {
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("no vLLM servers");
    }
    this.servers = List.copyOf(servers);
    this.model = model;
    this.tokenizer = tokenizer;
    this.maxPositions = maxPositions;
    this.stopStrings = List.copyOf(stopStrings);
    this.chatTemplate = chatTemplate;
    this.adapters = adapters;
    this.inFlight = new Semaphore(maxConcurrent);
    this.retryFor = retryFor;
    // virtual-thread-like economy without Java 21: requests block on I/O, so a cached pool is fine
    this.pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "whale-vllm-request");
      t.setDaemon(true);
      return t;
    });
  }

  /** The served name requests use (the base's, or the adapter's). */
  public String model() {
    return model;
  }

  @Override
  public ModelLimits limits() {
    return ModelLimits.forContext(maxPositions);
  }

  @Override
  public ChatTemplate chatTemplate() {
    return chatTemplate;
  }

  @Override
  public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
    List<Future<Completion>> futures = new ArrayList<>(requests.size());
    for (GenerationRequest r : requests) {
      futures.add(pool.submit(() -> one(r, params)));
    }
    List<Completion> out = new ArrayList<>(requests.size());
    try {
      for (Future<Completion> f : futures) {
        out.add(f.get());
      }
    } catch (InterruptedException e) {
      futures.forEach(f -> f.cancel(true));
      Thread.currentThread().interrupt();
      throw new VllmException("interrupted while sampling on vLLM", false, e);
    } catch (ExecutionException e) {
      futures.forEach(f -> f.cancel(true));
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(e.getCause());
    }
    return out;
  }

  private Completion one(GenerationRequest r, SamplingParams params) throws InterruptedException {
    int maxNew = Math.min(Math.max(0, r.maxNewTokens()), maxPositions - 1);
    int[] ids = tokenizer.promptIds(r.prompt());
    if (ids.length + maxNew > maxPositions) {
      if (r.chat()) {
        return new Completion("", ids.length, 0, "the conversation's " + ids.length + " tokens and "
            + maxNew + " new tokens exceed the model's context of " + maxPositions
            + " (max_position_embeddings)");
      }
      ids = Arrays.copyOfRange(ids, ids.length + maxNew - maxPositions, ids.length);
    }
    if (maxNew == 0) {
      return new Completion("", ids.length, 0);
    }
    double temperature = r.temperature() != null ? r.temperature() : params.temperature();
    var call = new VllmClient.Call(model, ids, maxNew, temperature, params.topK(), r.seed(),
        r.chat() ? List.of() : stopStrings, false);
    VllmClient.Sample s = send(call);
    whale.model.SampledTokens sink = sampled;
    if (sink != null) {
      sink.put(r.prompt(), s.text(), s.tokenIds());
    }
    completions.incrementAndGet();
    if (!Arrays.equals(tokenizer.encodeContinuation(s.text()), withoutEos(s.tokenIds()))) {
      retokenizedOtherwise.incrementAndGet();
    }
    return new Completion(s.text(), ids.length, s.tokenIds().length);
  }

  /** Sends with retries: transient failures back off and move to the next server. */
  VllmClient.Sample send(VllmClient.Call call) throws InterruptedException {
    long deadline = System.nanoTime() + retryFor.toNanos();
    long backoffMs = 500;
    inFlight.acquire();
    try {
      while (true) {
        VllmClient server = servers.get(Math.floorMod(next.getAndIncrement(), servers.size()));
        try {
          adapters.ready(server);
          return server.complete(call);
        } catch (VllmException e) {
          boolean lostModel = e.status() == 404;
          if (lostModel) {
            adapters.lost(server); // restarted without the adapter: load and check it again
          }
          if (!(e.transientFailure() || lostModel) || System.nanoTime() > deadline) {
            throw e;
          }
        }
        Thread.sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 8000);
      }
    } finally {
      inFlight.release();
    }
  }

  /** From now on, every completion's sampled ids go to {@code sink} (for token-exact RSFT). */
  public void recordInto(whale.model.SampledTokens sink) {
    this.sampled = sink;
  }

  /**
   * Of the completions so far, how many whale's tokenizer, given their text back, splits into other
   * tokens than the server sampled (a stop string inside a token, or a non-canonical BPE split):
   * what training on the text instead of the sampled ids would change.
   */
  public int[] retokenization() {
    return new int[] {retokenizedOtherwise.get(), completions.get()};
  }

  private int[] withoutEos(int[] ids) {
    int n = ids.length;
    while (n > 0 && tokenizer.eosIds().contains(ids[n - 1])) {
      n--;
    }
    return n == ids.length ? ids : Arrays.copyOf(ids, n);
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
