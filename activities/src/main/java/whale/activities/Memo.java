package whale.activities;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import whale.store.ArtifactStore;

/**
 * Makes an activity idempotent: its result is remembered under the hash of its full request, so a
 * retry (after a crash, a timeout, a lost completion) returns the finished result without redoing
 * the work. Requests carry everything that determines the result, references included.
 */
final class Memo {
  private static final Logger LOG = LoggerFactory.getLogger(Memo.class);
  private static final Pattern REF = Pattern.compile("sha256:[0-9a-f]{64}");

  private Memo() {}

  /**
   * What is remembered, and the version of how it is computed. A changed request record changes
   * its JSON and so its key by itself; bump the version when the work behind an unchanged request
   * changes its result (a fixed bug, another training loop), so that no store hands back results of
   * the old code. Version 1 keys are the original ones (namespace and request JSON), so stores
   * written before versions existed keep their entries.
   */
  enum Kind {
    BASE_MODEL("base-model", 1, true),
    // An RSFT step and an evaluation take a core per model call (Cores.gated) and the step again for
    // its SFT, never for the whole activity: between calls they wait for their sandboxes, and a
    // core held through that wait sat idle. Never a core while waiting for a sandbox either: a step
    // holding a core for its rollouts while an evaluation held the sandboxes and waited for a core
    // deadlocked.
    RSFT_STEP("rsft-step", 1, false),
    PROPOSE("propose", 1, false),
    EVALUATE("evaluate", 1, false);

    final String namespace;
    final int version;
    /** Model work on one core each: computed under {@link Cores}. */
    final boolean onCore;

    Kind(String namespace, int version, boolean onCore) {
      this.namespace = namespace;
      this.version = version;
      this.onCore = onCore;
    }

    /** The memo key of {@code requestJson}. */
    String key(String requestJson) {
      String versioned = version == 1 ? "" : "v" + version + "\n";
      return ArtifactStore.sha256Hex(namespace + "\n" + versioned + requestJson);
    }
  }

  /**
   * Identical requests computing in this process, by store and key: a second one waits for the
   * first and reads its memo instead of computing the same bytes beside it (a comparison's cells
   * ask for the same base, RSFT steps and evaluations at about the same time).
   */
  private static final ConcurrentHashMap<String, CompletableFuture<Void>> RUNNING =
      new ConcurrentHashMap<>();

  static <T> T once(ArtifactStore store, Kind kind, Object request, Class<T> type, Supplier<T> work) {
    String namespace = kind.namespace;
    String key;
    try {
      key = kind.key(ArtifactStore.json().writeValueAsString(request));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    String running = store.describe() + "\n" + namespace + "\n" + key;
    boolean waited = false;
    while (true) {
      T remembered = remembered(store, namespace, key, type, true);
      if (remembered != null) {
        WhaleMetrics.memo(namespace, waited ? "joined" : "remembered");
        return remembered;
      }
      CompletableFuture<Void> mine = new CompletableFuture<>();
      CompletableFuture<Void> other = RUNNING.putIfAbsent(running, mine);
      if (other == null) {
        try {
          // it may have finished between the look above and taking the slot
          T late = remembered(store, namespace, key, type, false);
          if (late != null) {
            WhaleMetrics.memo(namespace, waited ? "joined" : "remembered");
            return late;
          }
          T result = kind.onCore ? Cores.run(work) : work.get();
          try {
            store.putMemo(namespace, key, ArtifactStore.json().writeValueAsString(result));
          } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
          }
          WhaleMetrics.memo(namespace, "computed");
          return result;
        } finally {
          RUNNING.remove(running, mine);
          mine.complete(null);
        }
      }
      try {
        other.get(); // its failure is its own: then this one looks again and computes
      } catch (InterruptedException e) { // the attempt was abandoned (ActivityHeartbeat)
        Thread.currentThread().interrupt();
        throw new IllegalStateException("abandoned while an identical " + namespace
            + " request computed in this process", e);
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException(e); // never: the slot's future only completes normally
      }
      waited = true;
    }
  }

  /** The trusted memo of {@code key}, or null when there is none (or it cannot be trusted). */
  private static <T> T remembered(ArtifactStore store, String namespace, String key, Class<T> type,
      boolean warn) {
    Optional<String> done = store.memo(namespace, key);
    if (done.isEmpty()) {
      return null;
    }
    T remembered = trusted(store, done.get(), type);
    if (remembered == null && warn) {
      LOG.warn("memo {}/{} is unreadable or names a missing or corrupt artifact: recomputing",
          namespace, key);
    }
    return remembered;
  }

  /**
   * The remembered result, or null when it cannot be trusted: its text does not parse, or an
   * artifact it references is gone or no longer hashes to its reference (the work is cheaper to
   * redo than a run built on bad bytes; redoing it rewrites the same content).
   */
  private static <T> T trusted(ArtifactStore store, String memo, Class<T> type) {
    T value;
    try {
      value = ArtifactStore.json().readValue(memo, type);
    } catch (JsonProcessingException e) {
      return null;
    }
    Matcher m = REF.matcher(memo);
    while (m.find()) {
      if (!store.intact(m.group())) {
        return null;
      }
    }
    return value;
  }
}
