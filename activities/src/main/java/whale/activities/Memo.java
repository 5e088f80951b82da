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

  static <T> T once(ArtifactStore store, String namespace, Object request, Class<T> type,
      Supplier<T> work) {
    String key;
    try {
      key = ArtifactStore.sha256Hex(namespace + "\n"
          + ArtifactStore.json().writeValueAsString(request));
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
