package whale.activities;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.Optional;
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
    BASE_MODEL("base-model", 1),
    RSFT_STEP("rsft-step", 1),
    PROPOSE("propose", 1),
    EVALUATE("evaluate", 1);

    final String namespace;
    final int version;

    Kind(String namespace, int version) {
      this.namespace = namespace;
      this.version = version;
    }

    /** The memo key of {@code requestJson}. */
    String key(String requestJson) {
      String versioned = version == 1 ? "" : "v" + version + "\n";
      return ArtifactStore.sha256Hex(namespace + "\n" + versioned + requestJson);
    }
  }

  static <T> T once(ArtifactStore store, Kind kind, Object request, Class<T> type, Supplier<T> work) {
    String namespace = kind.namespace;
    String key;
    try {
      key = kind.key(ArtifactStore.json().writeValueAsString(request));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    Optional<String> done = store.memo(namespace, key);
    if (done.isPresent()) {
      T remembered = trusted(store, done.get(), type);
      if (remembered != null) {
        return remembered;
      }
      LOG.warn("memo {}/{} is unreadable or names a missing or corrupt artifact: recomputing",
          namespace, key);
    }
    T result = work.get();
    try {
      store.putMemo(namespace, key, ArtifactStore.json().writeValueAsString(result));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return result;
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
