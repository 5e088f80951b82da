package whale.store;

import com.fasterxml.jackson.core.type.TypeReference;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Which checkpoints each run still holds, in the store ({@code pins/<sha256 of the run id>.json}),
 * so that a store shared by several runs (a comparison's cells, the base every cell starts from,
 * seeds that give identical bytes) deletes an object only when no run's pin holds it. A run's pin
 * stays after it ends: it names what the run keeps (its base, phase ends, best, last steps).
 * Pin rewrites and deletions happen under one lock (a JVM lock between threads; across processes
 * and machines a file lock on the shared file system, or {@link RemoteLease} on an object store), so
 * no deletion sees a half-updated pin set and no hold falls between a deletion's check and its act.
 */
public final class Pins {
  private static final ReentrantLock JVM_LOCK = new ReentrantLock();

  private final ArtifactStore store;
  private final Path dir; // the local pins (no remote)
  private final Remote remote; // or the remote's pins/

  /** One run's pin as stored. */
  public record Pin(String run, List<String> held) {}

  /** What {@link #retain} did. */
  public record Outcome(List<String> deleted, List<String> pinnedElsewhere, long bytesFreed) {}

  public Pins(ArtifactStore store) {
    this.store = store;
    this.remote = store.remote();
    this.dir = store.root().resolve("pins");
    if (remote != null) {
      return;
    }
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + dir, e);
    }
  }

  /**
   * Adds {@code ref} to {@code owner}'s pin: an activity that just produced (or found memoized) a
   * checkpoint holds it for its workflow until that workflow's next {@link #retain} takes over, so
   * no other run's deletion falls between the two. Returns whether the object is still stored
   * (false: deleted before the pin; the caller must make it again).
   */
  public boolean hold(String owner, String ref) {
    return locked(() -> {
      TreeSet<String> h = new TreeSet<>(held(owner));
      if (h.add(ref)) {
        write(owner, new Pin(owner, List.copyOf(h)));
      }
      return store.stored(ref);
    });
  }

  /**
   * Replaces {@code run}'s pin with {@code held} and drops the pin {@link #hold} kept for
   * {@code caller} (the workflow asking; null or the run itself: none), then deletes each of
   * {@code released} that no pin holds, calling {@code alsoDelete} for it (derived caches).
   * Idempotent: a retry writes the same pin and finds the deleted objects gone.
   */
  public Outcome retain(String run, String caller, List<String> held, List<String> released,
      Consumer<String> alsoDelete) {
    return locked(() -> {
      write(run, new Pin(run, List.copyOf(new TreeSet<>(held))));
      if (caller != null && !caller.equals(run)) {
        drop(caller); // its holds are in the run's pin now
      }
      Set<String> pinned = pinnedByAll();
      List<String> deleted = new ArrayList<>();
      List<String> elsewhere = new ArrayList<>();
      long freed = 0;
      for (String ref : new TreeSet<>(released)) {
        if (pinned.contains(ref)) {
          elsewhere.add(ref);
          continue;
        }
        long bytes = store.delete(ref);
        alsoDelete.accept(ref);
        if (bytes >= 0) {
          deleted.add(ref);
          freed += bytes;
        }
      }
      return new Outcome(deleted, elsewhere, freed);
    });
  }

  /** The run's pin, if it has one. */
  public List<String> held(String run) {
    if (remote != null) {
      return remote.get(pinKey(run)).map(v -> read(v.bytes(), pinKey(run)).held()).orElse(List.of());
    }
    Path p = pinPath(run);
    return Files.exists(p) ? read(p).held() : List.of();
  }

  /** Every reference some run's pin holds. */
  public Set<String> pinnedByAll() {
    Set<String> out = new TreeSet<>();
    if (remote != null) {
      for (String key : remote.list("pins/")) {
        if (key.endsWith(".json")) {
          remote.get(key).ifPresent(v -> out.addAll(read(v.bytes(), key).held()));
        }
      }
      return out;
    }
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(f -> f.getFileName().toString().endsWith(".json")).toList()) {
        out.addAll(read(p).held());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return out;
  }

  private void write(String run, Pin pin) {
    if (remote != null) {
      remote.put(pinKey(run), json(pin));
    } else {
      ArtifactStore.writeAtomically(pinPath(run), json(pin));
    }
  }

  private void drop(String run) throws IOException {
    if (remote != null) {
      remote.delete(pinKey(run));
    } else {
      Files.deleteIfExists(pinPath(run));
    }
  }

  private Pin read(Path p) {
    try {
      return read(Files.readAllBytes(p), p.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the pin " + p, e);
    }
  }

  private static Pin read(byte[] bytes, String where) {
    try {
      return ArtifactStore.json().readValue(bytes, new TypeReference<Pin>() {});
    } catch (IOException e) {
      // an unreadable pin might hold anything: refuse to delete rather than guess
      throw new UncheckedIOException("cannot read the pin " + where, e);
    }
  }

  private Path pinPath(String run) {
    return dir.resolve(ArtifactStore.sha256Hex(run) + ".json");
  }

  private static String pinKey(String run) {
    return "pins/" + ArtifactStore.sha256Hex(run) + ".json";
  }

  private static byte[] json(Pin pin) {
    try {
      return ArtifactStore.json().writeValueAsBytes(pin);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private interface Work<T> {
    T run() throws IOException;
  }

  private <T> T locked(Work<T> work) {
    if (remote != null) { // the lease alone: threads of one worker take it like other machines
      try (RemoteLease ignored = RemoteLease.acquire(remote, "pins/.lock")) {
        return work.run();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot update the pins in " + remote.describe(), e);
      }
    }
    JVM_LOCK.lock();
    try (FileChannel ch = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE,
        StandardOpenOption.WRITE); FileLock ignored = ch.lock()) {
      return work.run();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot update the pins in " + dir, e);
    } finally {
      JVM_LOCK.unlock();
    }
  }
}
