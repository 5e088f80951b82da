package whale.activities;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import whale.workflows.activities.BaseModelRequest;

/**
 * Builtin base models shared by the test classes of one test JVM (surefire's one fork runs the
 * whole module), so two classes asking for the same base pretrain it once. The shared store is the
 * activity's own memo: {@link WeightActivitiesImpl#prepareBaseModel} on a store under
 * {@code target/shared-bases/}, keyed by the full request, and the checkpoint is copied into the
 * test's store (the same bytes, so the same reference). Seeded pretraining is byte-identical in
 * every process ({@link CrossProcessDeterminismTest}), so a shared base is the one the test would
 * have trained itself. The store lives for one JVM only: a base kept across runs would outlive
 * code changes that change its bytes. One lock serializes the JVM's calls (a class asking for a
 * base another is training waits for it); each JVM has its own directory, so several forks would
 * each train their own, never read a half-written one.
 */
public final class SharedBases {
  private static ActivityRuntime shared;

  private SharedBases() {}

  /** The base of {@code req} in {@code runtime}'s store, pretrained at most once per JVM. */
  public static synchronized String base(ActivityRuntime runtime, BaseModelRequest req) {
    ActivityRuntime s = shared();
    String ref = new WeightActivitiesImpl(s).prepareBaseModel(req);
    return runtime.store().putBytes(s.store().getBytes(ref));
  }

  /**
   * A base of {@code req} pretrained elsewhere (another JVM): becomes the shared base when there
   * is none yet; otherwise the shared base is returned, which the caller compares with its own.
   */
  static synchronized String offer(BaseModelRequest req, byte[] checkpoint) {
    ActivityRuntime s = shared();
    return Memo.once(s.store(), Memo.Kind.BASE_MODEL, req, String.class,
        () -> s.store().putBytes(checkpoint));
  }

  private static synchronized ActivityRuntime shared() {
    if (shared == null) {
      try {
        Path root = Path.of("target", "shared-bases");
        Files.createDirectories(root);
        Path dir = Files.createTempDirectory(root, "jvm-");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir), "shared-bases-cleanup"));
        shared = ActivityRuntime.open(dir, ActivityRuntime.Mode.IN_PROCESS);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return shared;
  }

  private static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // left for `mvn clean`
    }
  }
}
