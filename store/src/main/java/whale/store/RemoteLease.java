package whale.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A lock that workers on different machines share through one object: taken by creating it only if
 * absent (S3 {@code If-None-Match: *}), given back by deleting it. It names its holder and an expiry,
 * so a holder that crashed does not block the store forever: after the expiry another taker replaces
 * it only if it is still the same object ({@code If-Match} on its ETag), so two takers never both
 * win. The work under it (rewriting a pin, deleting a few objects) takes seconds; the lease is
 * minutes, which bounds how far the machines' clocks may disagree.
 */
final class RemoteLease implements AutoCloseable {
  static final long LEASE_MILLIS = Long.getLong("whale.pins.leaseSeconds", 300) * 1000;
  private static final long WAIT_MILLIS = Long.getLong("whale.pins.waitSeconds", 900) * 1000;

  private final Remote remote;
  private final String key;
  private final String holder;

  private RemoteLease(Remote remote, String key, String holder) {
    this.remote = remote;
    this.key = key;
    this.holder = holder;
  }

  static RemoteLease acquire(Remote remote, String key) {
    String holder = UUID.randomUUID().toString();
    long deadline = System.currentTimeMillis() + WAIT_MILLIS;
    for (long pause = 20; ; pause = Math.min(pause * 2, 1000)) {
      byte[] body = body(holder, System.currentTimeMillis() + LEASE_MILLIS);
      if (remote.putIfAbsent(key, body)) {
        return new RemoteLease(remote, key, holder);
      }
      Optional<Remote.Versioned> current = remote.get(key);
      if (current.isEmpty()) {
        continue; // given back meanwhile: try again at once
      }
      Map<?, ?> seen = parse(current.get().bytes());
      long expires = seen.get("expires") instanceof Number n ? n.longValue() : 0;
      if (expires < System.currentTimeMillis()
          && remote.putIfMatch(key, body, current.get().etag())) {
        return new RemoteLease(remote, key, holder); // its holder died holding it
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the lock " + remote.describe() + "/" + key
            + " is held by " + seen.get("holder") + " until " + expires + " (epoch ms); waited "
            + WAIT_MILLIS / 1000 + " s");
      }
      try {
        Thread.sleep(pause + ThreadLocalRandom.current().nextLong(pause));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + key, e);
      }
    }
  }

  /** Gives the lock back, unless it expired and another holder took it over meanwhile. */
  @Override
  public void close() {
    Optional<Remote.Versioned> current = remote.get(key);
    if (current.isPresent() && holder.equals(parse(current.get().bytes()).get("holder"))) {
      remote.delete(key);
    }
  }

  private static byte[] body(String holder, long expires) {
    try {
      return ArtifactStore.json().writeValueAsBytes(Map.of("holder", holder, "expires", expires));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<?, ?> parse(byte[] bytes) {
    try {
      return ArtifactStore.json().readValue(bytes, Map.class);
    } catch (IOException e) {
      return Map.of(); // unreadable: treated as expired, so a taker replaces it
    }
  }
}
