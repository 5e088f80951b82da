package whale.activities;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.Optional;
import java.util.function.Supplier;
import whale.store.ArtifactStore;

/**
 * Makes an activity idempotent: its result is remembered under the hash of its full request, so a
 * retry (after a crash, a timeout, a lost completion) returns the finished result without redoing
 * the work. Requests carry everything that determines the result, references included.
 */
final class Memo {
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
      try {
        return ArtifactStore.json().readValue(done.get(), type);
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("corrupt memo " + namespace + "/" + key, e);
      }
    }
    T result = work.get();
    try {
      store.putMemo(namespace, key, ArtifactStore.json().writeValueAsString(result));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return result;
  }
}
