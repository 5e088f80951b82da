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
 * Pin rewrites and deletions happen under one lock (a file lock across processes and machines on
 * the shared file system, a JVM lock between threads), so no deletion sees a half-updated pin set.
 */
public final class Pins {
  private static final ReentrantLock JVM_LOCK = new ReentrantLock();

  private final ArtifactStore store;
  private final Path dir;

  /** One run's pin as stored. */
  public record Pin(String run, List<String> held) {}

  /** What {@link #retain} did. */
  public record Outcome(List<String> deleted, List<String> pinnedElsewhere, long bytesFreed) {}

  public Pins(ArtifactStore store) {
    this.store = store;
    this.dir = store.root().resolve("pins");
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
        ArtifactStore.writeAtomically(pinPath(owner), json(new Pin(owner, List.copyOf(h))));
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
      ArtifactStore.writeAtomically(pinPath(run),
          json(new Pin(run, List.copyOf(new TreeSet<>(held)))));
      if (caller != null && !caller.equals(run)) {
        Files.deleteIfExists(pinPath(caller)); // its holds are in the run's pin now
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
    Path p = pinPath(run);
    return Files.exists(p) ? read(p).held() : List.of();
  }

  /** Every reference some run's pin holds. */
  public Set<String> pinnedByAll() {
    Set<String> out = new TreeSet<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(f -> f.getFileName().toString().endsWith(".json")).toList()) {
        out.addAll(read(p).held());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir, e);
    }
    return out;
  }

  private Pin read(Path p) {
    try {
      return ArtifactStore.json().readValue(p.toFile(), new TypeReference<Pin>() {});
    } catch (IOException e) {
      // an unreadable pin might hold anything: refuse to delete rather than guess
      throw new UncheckedIOException("cannot read the pin " + p, e);
    }
  }

  private Path pinPath(String run) {
    return dir.resolve(ArtifactStore.sha256Hex(run) + ".json");
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
