package whale.workers.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Where e2e tests keep their files: target/e2e/NAME (logs, database, artifacts, screenshots).
 * Public for the benchmarks (bench/*.java), which run from the repository root.
 */
public final class E2e {
  private E2e() {}

  public static Path outputDir(String name) throws IOException {
    Path base = Path.of(System.getProperty("e2e.dir", "target/e2e"));
    Path dir = base.resolve(name).toAbsolutePath();
    if (Files.exists(dir)) {
      try (var walk = Files.walk(dir)) {
        walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    return Files.createDirectories(dir);
  }

  /**
   * The tiny spec (a whole run in ~25 s on 2 cores), as a file for --input-file: from the workers
   * module (the tests) or the repository root (the benchmarks).
   */
  public static Path tinySpec() {
    Path p = Path.of("src/test/resources/e2e/tiny.json").toAbsolutePath();
    if (!Files.isRegularFile(p)) {
      p = Path.of("workers/src/test/resources/e2e/tiny.json").toAbsolutePath();
    }
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException("missing " + p);
    }
    return p;
  }

  /**
   * A command proposer ({@code harness.command}) that holds every proposal until {@code gate}
   * exists, touching {@code GATE.waiting} when it starts to wait, then proposes copies of the
   * archive's harnesses. A test that holds the gate closed stops the run at a point it knows, for
   * as long as it needs, with no timing window to hit.
   */
  static List<String> gatedProposer(Path dir, Path gate) throws IOException {
    Path script = dir.resolve("gated-proposer.sh");
    Files.writeString(script, """
        #!/bin/sh
        # waits for the gate, then proposes copies of the archive's harnesses
        touch "$1.waiting"
        while [ ! -e "$1" ]; do sleep 0.1; done
        i=0
        find "$WHALE_ARCHIVE" -name source.java | sort | head -n "$WHALE_CANDIDATES" | while read -r f; do
          i=$((i + 1)); cp "$f" "$WHALE_CANDIDATES_DIR/Copy$i.java"
        done
        """);
    return List.of("sh", script.toString(), gate.toString());
  }

  static void waitForFile(Path p) throws InterruptedException {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (!Files.exists(p)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("never appeared: " + p);
      }
      Thread.sleep(100);
    }
  }
}
