package whale.workers.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where e2e tests keep their files: target/e2e/NAME (logs, database, artifacts, screenshots). */
final class E2e {
  private E2e() {}

  static Path outputDir(String name) throws IOException {
    Path base = Path.of(System.getProperty("e2e.dir", "target/e2e"));
    Path dir = base.resolve(name).toAbsolutePath();
    if (Files.exists(dir)) {
      try (var walk = Files.walk(dir)) {
        walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    return Files.createDirectories(dir);
  }

  /** The tiny spec (a whole run in ~25 s on 2 cores), as a file for --input-file. */
  static Path tinySpec() {
    Path p = Path.of("src/test/resources/e2e/tiny.json").toAbsolutePath();
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException("missing " + p);
    }
    return p;
  }
}
