package whale.task.searchqa;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.lucene.store.FSDirectory;
import whale.store.ArtifactStore;

/**
 * A user-supplied corpus is indexed once: the index is written under
 * {@code named/searchqa-index/<key>/} of the artifact store, where the key hashes the corpus file's
 * content and the index layout, so every worker sharing the store (and every later run) opens the
 * same index instead of rebuilding it, and an edited corpus gets a new one. The directory appears by
 * an atomic rename only when complete; when two workers build at once, the first rename wins.
 */
public final class CorpusIndexCache {
  private CorpusIndexCache() {}

  /** An opened index and whether this call had to build it. */
  public record Opened(SearchIndex index, boolean built, Path dir) {}

  public static Opened open(ArtifactStore store, Path corpus) {
    if (!Files.isRegularFile(corpus)) {
      throw new IllegalArgumentException("data.corpusFile: no such file " + corpus);
    }
    String key = ArtifactStore.sha256Hex(SearchIndex.LAYOUT + ":" + ArtifactStore.sha256Hex(corpus));
    Path dir = store.namedDir("searchqa-index").resolve(key);
    boolean built = false;
    if (!Files.isDirectory(dir)) {
      build(store, corpus, dir);
      built = true;
    }
    try {
      return new Opened(SearchIndex.open(FSDirectory.open(dir)), built, dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the cached index " + dir, e);
    }
  }

  private static void build(ArtifactStore store, Path corpus, Path dir) {
    Path tmp = store.newTempFile(".idx");
    try {
      Files.delete(tmp);
      Files.createDirectories(tmp);
      try (FSDirectory fs = FSDirectory.open(tmp)) {
        SearchIndex.write(fs, sink -> QaJsonl.readCorpus(corpus, sink));
      }
      try {
        Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
      } catch (FileAlreadyExistsException | DirectoryNotEmptyException | AtomicMoveNotSupportedException e) {
        if (!Files.isDirectory(dir)) {
          throw e;
        }
        deleteTree(tmp); // another worker finished the same index first
      }
    } catch (IOException e) {
      deleteTree(tmp);
      throw new UncheckedIOException("cannot build the search index of " + corpus, e);
    } catch (RuntimeException e) {
      deleteTree(tmp);
      throw e;
    }
  }

  private static void deleteTree(Path p) {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(x);
      }
    } catch (IOException ignored) {
      // a leftover in tmp/ is harmless
    }
  }
}
