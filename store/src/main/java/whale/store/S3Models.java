package whale.store;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A model directory kept in object storage ({@code model.path: s3://bucket/prefix}): fetched once per
 * machine into {@code <models cache>/s3/<hash of the URI>} (written beside it, then renamed, so a
 * cut fetch leaves nothing that looks whole) and read from there after. The path depends only on
 * the URI and the cache root, so workers of one image agree on it, as checkpoints record their base
 * by path.
 */
public final class S3Models {
  private S3Models() {}

  public static Path fetch(String uri, Path cacheRoot, PrintStream log) {
    Path dir = cacheRoot.resolve("s3").resolve(ArtifactStore.sha256Hex(uri).substring(0, 24));
    if (Files.isRegularFile(dir.resolve("config.json"))) {
      return dir;
    }
    try (S3Remote remote = S3Remote.open(uri.replaceAll("/+$", ""))) {
      List<String> keys = remote.list("").stream().filter(k -> !k.endsWith("/")).toList();
      if (keys.stream().noneMatch(k -> k.equals("config.json"))) {
        throw new IllegalArgumentException(uri + " holds no config.json (a Hugging Face model "
            + "directory is needed; found " + keys.size() + " objects)");
      }
      Files.createDirectories(dir.getParent());
      Path tmp = Files.createTempDirectory(dir.getParent(), dir.getFileName() + ".tmp-");
      long bytes = 0;
      for (String key : keys) {
        Path out = tmp.resolve(key).normalize();
        if (!out.startsWith(tmp)) {
          throw new IllegalArgumentException(uri + ": object name " + key + " leaves the directory");
        }
        Files.createDirectories(out.getParent());
        remote.download(key, out);
        bytes += Files.size(out);
      }
      try {
        Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        if (!Files.isRegularFile(dir.resolve("config.json"))) {
          throw e;
        }
        deleteTree(tmp); // another fetch on this machine finished first
      }
      log.printf("fetched %s (%d files, %.1f MB) into %s%n", uri, keys.size(), bytes / 1e6, dir);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fetch the model " + uri + " into " + dir, e);
    }
  }

  private static void deleteTree(Path p) throws IOException {
    try (Stream<Path> s = Files.walk(p)) {
      for (Path f : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }
}
