package whale.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where big data lives: checkpoints, rollouts, traces, harness sources. Objects are immutable and
 * content-addressed ({@code sha256:<hex>}), so only a short reference travels through Temporal, a
 * retried activity that writes the same bytes gets the same reference, and a half-written file is
 * never visible (write to a temporary name, then an atomic rename). Memos map an activity's request
 * key to its result so a retry after a crash repeats no finished work.
 *
 * <p>Two places: a local directory (on several machines, a shared file system mounted at the same
 * path), or a {@link Remote} object store ({@code s3://bucket/prefix}) that workers share with nothing
 * else. With a remote, the directory is this worker's read-through cache: objects are uploaded when
 * put and downloaded (streamed, checked) when first read, so each crosses the network once per
 * worker; least recently used objects leave the cache beyond its bound. Memos and pins then live
 * only in the remote, which every worker sees. A memo is written after the objects it names, so a
 * memo never names a missing object.
 *
 * <p>Every read checks the bytes against their reference (a flipped bit, a truncated file): a corrupt
 * object is moved to {@code corrupt/} and the read fails naming the reference, so nothing is computed
 * from bad bytes and a rewrite of the same content restores it.
 */
public final class ArtifactStore {
  private static final Pattern REF = Pattern.compile("sha256:[0-9a-f]{64}");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*");
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final Path root;
  private final Remote remote; // null: the directory is the store
  private final long cacheMaxBytes;
  private final AtomicLong cachedBytes = new AtomicLong(-1); // -1: not counted yet

  /** A stored object whose bytes no longer hash to its reference. */
  public static final class CorruptArtifactException extends IllegalStateException {
    private final String ref;

    CorruptArtifactException(String ref, String message) {
      super(message);
      this.ref = ref;
    }

    public String ref() {
      return ref;
    }
  }

  public ArtifactStore(Path root) {
    this(root, null, 0);
  }

  /**
   * A store in {@code remote}, cached in {@code cache} up to {@code cacheMaxBytes} (0: unbounded).
   * The remote is checked first: a wrong endpoint, missing bucket or bad credentials fail here.
   */
  public ArtifactStore(Path cache, Remote remote, long cacheMaxBytes) {
    this.root = cache.toAbsolutePath().normalize();
    this.remote = remote;
    this.cacheMaxBytes = cacheMaxBytes;
    if (remote != null) {
      remote.check();
    }
    try {
      Files.createDirectories(this.root.resolve("objects"));
      Files.createDirectories(this.root.resolve("tmp"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create artifact store at " + this.root, e);
    }
  }

  /**
   * The store {@code location} names: {@code s3://bucket[/prefix]} (cached in {@code cache}, at most
   * {@code cacheMaxBytes}) or a directory.
   */
  public static ArtifactStore open(String location, Path cache, long cacheMaxBytes) {
    if (S3Remote.isS3(location)) {
      return new ArtifactStore(cache, S3Remote.open(location), cacheMaxBytes);
    }
    return new ArtifactStore(Path.of(location));
  }

  /** The local directory: the store itself, or with a remote this worker's cache of it. */
  public Path root() {
    return root;
  }

  /** The remote behind the cache, or null when the directory is the store. */
  public Remote remote() {
    return remote;
  }

  /** Where the objects live, for messages. */
  public String describe() {
    return remote == null ? root.toString() : remote.describe() + " (cache " + root + ")";
  }

  public static ObjectMapper json() {
    return JSON;
  }

  /** A fresh temporary file inside the store (same file system, so the final rename is atomic). */
  public Path newTempFile(String suffix) {
    try {
      return Files.createTempFile(root.resolve("tmp"), "w-", suffix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String putBytes(byte[] bytes) {
    Path tmp = newTempFile(".obj");
    try {
      Files.write(tmp, bytes);
      return putFile(tmp);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String putString(String text) {
    return putBytes(text.getBytes(StandardCharsets.UTF_8));
  }

  public String putJson(Object value) {
    try {
      return putBytes(JSON.writeValueAsBytes(value));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Moves a finished file into the store under its content hash and returns the reference. */
  public String putFile(Path file) {
    try {
      String hex = sha256(file);
      Path dest = objectPath(hex);
      Files.createDirectories(dest.getParent());
      if (Files.exists(dest) && hashes(dest, hex)) {
        Files.delete(file); // same content already stored: nothing to do
      } else {
        moveAtomically(file, dest);
        cached(Files.size(dest));
      }
      if (remote != null && remote.size(objectKey(hex)).isEmpty()) {
        remote.upload(dest, objectKey(hex)); // visible only once whole
      }
      evict(dest);
      return "sha256:" + hex;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot store " + file, e);
    }
  }

  /**
   * The stored file of a reference, its content checked against the reference on every call
   * (streamed, so big files are fine; a cache keyed by size and time would miss a same-size rewrite
   * within the file system's clock tick). Fails clearly on a malformed, missing or corrupt reference.
   */
  public Path path(String ref) {
    Path cached = REF.matcher(ref).matches() ? objectPath(ref.substring(7)) : null;
    if (remote != null && cached != null && !Files.exists(cached) && fetch(ref, cached)) {
      return cached; // checked on its way down: no second pass over it
    }
    for (boolean again = remote != null; ; again = false) {
      Path p = located(ref);
      try {
        String actual = sha256(p);
        if (actual.equals(ref.substring(7))) {
          touch(p);
          return p;
        }
        CorruptArtifactException c =
            corrupt(ref, p, "its " + Files.size(p) + " bytes hash to sha256:" + actual);
        if (!again) {
          throw c;
        } // else: the cache's copy went bad; the remote's is checked as it comes down
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read artifact " + ref, e);
      }
    }
  }

  /** Whether {@code ref} is stored with intact content (a corrupt copy is moved aside). */
  public boolean intact(String ref) {
    try {
      path(ref);
      return true;
    } catch (CorruptArtifactException | IllegalArgumentException e) {
      return false;
    }
  }

  public byte[] getBytes(String ref) {
    for (boolean again = remote != null; ; again = false) {
      Path p = located(ref);
      try {
        byte[] bytes = Files.readAllBytes(p);
        String actual = HexFormat.of().formatHex(digest().digest(bytes));
        if (actual.equals(ref.substring(7))) {
          touch(p);
          return bytes;
        }
        CorruptArtifactException c =
            corrupt(ref, p, "its " + bytes.length + " bytes hash to sha256:" + actual);
        if (!again) {
          throw c;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read artifact " + ref, e);
      }
    }
  }

  public String getString(String ref) {
    return new String(getBytes(ref), StandardCharsets.UTF_8);
  }

  public <T> T getJson(String ref, Class<T> type) {
    try {
      return JSON.readValue(getBytes(ref), type);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + ref + " as " + type.getSimpleName(), e);
    }
  }

  /** Whether an object is stored under {@code ref} (its content is not checked). */
  boolean stored(String ref) {
    if (!REF.matcher(ref).matches()) {
      return false;
    }
    return remote == null ? Files.exists(objectPath(ref.substring(7)))
        : remote.size(objectKey(ref.substring(7))).isPresent();
  }

  /**
   * Removes a stored object (checkpoint retention decides which); returns its size, or -1 when it
   * was not there (a retried deletion). Only {@link Pins} calls this, after checking no run pins it.
   */
  long delete(String ref) {
    if (ref == null || !REF.matcher(ref).matches()) {
      throw new IllegalArgumentException("not an artifact reference: '" + ref + "'");
    }
    Path p = objectPath(ref.substring(7));
    long size = -1;
    if (remote != null) {
      String key = objectKey(ref.substring(7));
      size = remote.size(key).orElse(-1);
      remote.delete(key);
    }
    try {
      long local = Files.size(p);
      Files.delete(p);
      cached(-local);
      return remote == null ? local : size;
    } catch (NoSuchFileException e) {
      return size;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete artifact " + ref, e);
    }
  }

  /** The value remembered for an activity request key, if a previous attempt finished. */
  public Optional<String> memo(String namespace, String key) {
    Path p = memoPath(namespace, key);
    if (remote != null) { // never cached: a memo may be rewritten (a deleted checkpoint made again)
      return remote.get(memoKey(namespace, key))
          .map(v -> new String(v.bytes(), StandardCharsets.UTF_8));
    }
    try {
      return Files.exists(p) ? Optional.of(Files.readString(p)) : Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Remembers a finished request's result (first writer wins; later writers must agree). */
  public void putMemo(String namespace, String key, String value) {
    Path p = memoPath(namespace, key);
    if (remote != null) {
      remote.put(memoKey(namespace, key), value.getBytes(StandardCharsets.UTF_8));
      return;
    }
    Path tmp = newTempFile(".memo");
    try {
      Files.createDirectories(p.getParent());
      Files.writeString(tmp, value);
      moveAtomically(tmp, p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A named, human-browsable directory (archives, reports) under {@code root/named/}: always local
   * (with a remote, this worker's), so only what is also put as an object is shared.
   */
  public Path namedDir(String name) {
    if (!NAME.matcher(name).matches() || name.contains("..")) {
      throw new IllegalArgumentException("bad artifact directory name: '" + name + "'");
    }
    Path p = root.resolve("named").resolve(name);
    try {
      Files.createDirectories(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }

  /** Writes a file atomically (used for the browsable archive tree). */
  public static void writeAtomically(Path dest, byte[] bytes) {
    try {
      Files.createDirectories(dest.getParent());
      Path tmp = Files.createTempFile(dest.getParent(), ".w-", ".tmp");
      Files.write(tmp, bytes);
      moveAtomically(tmp, dest);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + dest, e);
    }
  }

  /** Hex SHA-256 of a string, for memo keys. */
  public static String sha256Hex(String text) {
    return HexFormat.of().formatHex(digest().digest(text.getBytes(StandardCharsets.UTF_8)));
  }

  /** Hex SHA-256 of a file's bytes (e.g. a dataset file, to key what is derived from it). */
  public static String sha256Hex(Path file) {
    try {
      return sha256(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  private Path located(String ref) {
    if (ref == null || !REF.matcher(ref).matches()) {
      throw new IllegalArgumentException("not an artifact reference: '" + ref
          + "' (expected sha256:<64 hex digits>)");
    }
    Path p = objectPath(ref.substring(7));
    if (!Files.exists(p) && remote != null) {
      fetch(ref, p);
    }
    if (!Files.exists(p)) {
      Path moved = corruptPath(ref);
      throw new IllegalArgumentException("artifact " + ref + " is not in the store at " + describe()
          + (Files.exists(moved) ? " (a corrupt copy was moved to " + moved + ")" : ""));
    }
    return p;
  }

  /**
   * Brings a remote object into the cache, checked against its reference on the way: a corrupt
   * remote object is set aside under {@code corrupt/} in the remote (its content, written again,
   * repairs the store) and the read fails naming it. False when the remote has none.
   */
  private boolean fetch(String ref, Path p) {
    String hex = ref.substring(7);
    Path tmp = newTempFile(".get");
    try {
      if (!remote.download(objectKey(hex), tmp)) {
        return false;
      }
      String actual = sha256(tmp);
      if (!actual.equals(hex)) {
        long size = Files.size(tmp);
        remote.move(objectKey(hex), "corrupt/" + hex);
        throw new CorruptArtifactException(ref, "artifact " + ref + " is corrupt in "
            + remote.describe() + ": its " + size + " bytes hash to sha256:" + actual
            + " (moved to corrupt/" + hex + ")");
      }
      Files.createDirectories(p.getParent());
      moveAtomically(tmp, p);
      cached(Files.size(p));
      evict(p);
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fetch artifact " + ref + " from " + remote.describe(), e);
    } finally {
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException ignored) {
        // a stray temporary file; the next fetch uses another name
      }
    }
  }

  /** Marks a cached object as just used (the cache evicts the least recently used first). */
  private void touch(Path p) {
    if (remote != null) {
      try {
        Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis()));
      } catch (IOException ignored) {
        // evicted meanwhile: nothing to mark
      }
    }
  }

  private void cached(long delta) {
    if (remote != null) {
      cachedBytes.getAndUpdate(v -> v < 0 ? v : v + delta);
    }
  }

  /**
   * Keeps the cache within its bound: least recently used objects out, never {@code keep} (just
   * written or read). Only with a remote, where every object has another copy; a reader holding an
   * evicted file open keeps its bytes (POSIX).
   */
  private synchronized void evict(Path keep) {
    if (remote == null || cacheMaxBytes <= 0) {
      return;
    }
    try {
      if (cachedBytes.get() < 0) {
        long total = 0;
        for (Path f : cachedObjects()) {
          total += Files.size(f);
        }
        cachedBytes.set(total);
      }
      if (cachedBytes.get() <= cacheMaxBytes) {
        return;
      }
      List<Path> files = new ArrayList<>(cachedObjects());
      files.sort(Comparator.comparing(f -> {
        try {
          return Files.getLastModifiedTime(f).toMillis();
        } catch (IOException e) {
          return 0L;
        }
      }));
      for (Path f : files) {
        if (cachedBytes.get() <= cacheMaxBytes) {
          break;
        }
        if (!f.equals(keep)) {
          try {
            long size = Files.size(f);
            Files.delete(f);
            cachedBytes.addAndGet(-size);
          } catch (NoSuchFileException ignored) {
            // gone already
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot bound the cache at " + root, e);
    }
  }

  private List<Path> cachedObjects() throws IOException {
    try (Stream<Path> s = Files.walk(root.resolve("objects"))) {
      return s.filter(Files::isRegularFile).toList();
    }
  }

  private static String objectKey(String hex) {
    return "objects/" + hex.substring(0, 2) + "/" + hex.substring(2);
  }

  private static String memoKey(String namespace, String key) {
    return "memo/" + namespace + "/" + key;
  }

  /** Moves a corrupt object out of the way (so that rewriting its content repairs the store). */
  private CorruptArtifactException corrupt(String ref, Path p, String why) {
    Path moved = corruptPath(ref);
    try {
      Files.createDirectories(moved.getParent());
      long size = Files.size(p);
      moveAtomically(p, moved);
      cached(-size);
    } catch (IOException e) {
      moved = p; // left in place; the next read fails the same way
    }
    return new CorruptArtifactException(ref, "artifact " + ref + " is corrupt: " + why
        + " (moved to " + moved + ")");
  }

  private Path corruptPath(String ref) {
    return root.resolve("corrupt").resolve(ref.substring(7));
  }

  private static boolean hashes(Path p, String hex) throws IOException {
    return sha256(p).equals(hex);
  }

  private Path memoPath(String namespace, String key) {
    if (!namespace.matches("[a-z0-9-]+") || !key.matches("[0-9a-f]{16,64}")) {
      throw new IllegalArgumentException("bad memo key " + namespace + "/" + key);
    }
    return root.resolve("memo").resolve(namespace).resolve(key);
  }

  private Path objectPath(String hex) {
    return root.resolve("objects").resolve(hex.substring(0, 2)).resolve(hex.substring(2));
  }

  private static void moveAtomically(Path from, Path to) throws IOException {
    try {
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      try {
        Files.move(from, to);
      } catch (FileAlreadyExistsException ignored) {
        Files.deleteIfExists(from);
      }
    }
  }

  private static String sha256(Path file) throws IOException {
    MessageDigest md = digest();
    try (InputStream in = new DigestInputStream(Files.newInputStream(file), md);
        OutputStream sink = OutputStream.nullOutputStream()) {
      in.transferTo(sink);
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
