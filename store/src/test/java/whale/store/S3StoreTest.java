package whale.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The artifact store on S3, against S3Proxy as a separate process: two stores with their own caches
 * stand for two workers on machines that share only the bucket.
 */
class S3StoreTest {
  static final String BUCKET = "whale-test";
  static S3ProxyProcess s3;
  static Path serverDir;
  static int prefixes;

  @BeforeAll
  static void startServer(@TempDir Path dir) throws IOException {
    serverDir = dir;
    s3 = new S3ProxyProcess(dir, BUCKET);
  }

  @AfterAll
  static void stopServer() throws InterruptedException {
    s3.close();
  }

  /** A store on a fresh prefix of the bucket, so tests do not see each other's objects. */
  static String location() {
    return "s3://" + BUCKET + "/t" + (++prefixes);
  }

  static ArtifactStore worker(String location, Path cache, long maxBytes) {
    return new ArtifactStore(cache, s3.remote(location), maxBytes);
  }

  @Test
  void anObjectPutByOneWorkerIsReadByAnotherAndCachedThere(@TempDir Path a, @TempDir Path b) {
    String loc = location();
    ArtifactStore gpu = worker(loc, a, 0);
    ArtifactStore eval = worker(loc, b, 0);
    String ref = gpu.putString("checkpoint bytes");
    assertEquals("checkpoint bytes", eval.getString(ref));
    assertTrue(eval.path(ref).startsWith(b), "read from eval's own cache");
    // once cached it no longer needs the remote: delete it there and read again
    gpu.remote().delete("objects/" + ref.substring(7, 9) + "/" + ref.substring(9));
    assertEquals("checkpoint bytes", eval.getString(ref));
    assertFalse(gpu.stored(ref), "stored() asks the remote");
  }

  @Test
  void aBigCheckpointGoesUpInPartsAndComesDownStreamedAndChecked(@TempDir Path a, @TempDir Path b)
      throws IOException {
    String loc = location();
    ArtifactStore gpu = worker(loc, a, 0);
    Path big = randomFile(gpu, 40, 7); // 40 MiB: three parts of 16 MiB
    String hex = ArtifactStore.sha256Hex(big);
    String ref = gpu.putFile(big);
    assertEquals("sha256:" + hex, ref);
    assertEquals(40L << 20, gpu.remote().size("objects/" + hex.substring(0, 2) + "/"
        + hex.substring(2)).orElseThrow());
    Path down = worker(loc, b, 0).path(ref);
    assertEquals(hex, ArtifactStore.sha256Hex(down));
  }

  @Test
  void aCorruptRemoteObjectIsNamedSetAsideAndRepairedByWritingItAgain(@TempDir Path a,
      @TempDir Path b, @TempDir Path c) throws IOException {
    String loc = location();
    ArtifactStore gpu = worker(loc, a, 0);
    String ref = gpu.putString("the true bytes");
    String hex = ref.substring(7);
    // a flipped byte on the server's disk
    Path onServer = s3.data.resolve(BUCKET).resolve(loc.substring(loc.lastIndexOf('/') + 1))
        .resolve("objects").resolve(hex.substring(0, 2)).resolve(hex.substring(2));
    assertTrue(Files.isRegularFile(onServer), "S3Proxy keeps the object at " + onServer);
    Files.writeString(onServer, "the trve bytes");
    ArtifactStore eval = worker(loc, b, 0);
    ArtifactStore.CorruptArtifactException e =
        assertThrows(ArtifactStore.CorruptArtifactException.class, () -> eval.getString(ref));
    assertEquals(ref, e.ref());
    assertTrue(e.getMessage().contains("corrupt in s3://" + BUCKET), e.getMessage());
    assertTrue(gpu.remote().size("corrupt/" + hex).isPresent(), "set aside in the bucket");
    assertFalse(eval.intact(ref), "and no longer there under its reference");
    // the activity that made it runs again and puts the same bytes: the store is whole
    worker(loc, c, 0).putString("the true bytes");
    assertEquals("the true bytes", eval.getString(ref));
  }

  @Test
  void aCorruptCachedCopyIsFetchedAgainFromTheRemote(@TempDir Path a) throws IOException {
    ArtifactStore gpu = worker(location(), a, 0);
    String ref = gpu.putString("cached bytes");
    Files.writeString(gpu.path(ref), "cached bytez");
    assertEquals("cached bytes", gpu.getString(ref));
    assertEquals("cached bytes", Files.readString(gpu.path(ref)));
  }

  @Test
  void memosAreSharedThroughTheRemoteAndTheLastWriterWins(@TempDir Path a, @TempDir Path b) {
    String loc = location();
    ArtifactStore gpu = worker(loc, a, 0);
    ArtifactStore eval = worker(loc, b, 0);
    String key = ArtifactStore.sha256Hex("request");
    assertEquals(Optional.empty(), eval.memo("weight-step", key));
    gpu.putMemo("weight-step", key, "sha256:" + "a".repeat(64));
    assertEquals(Optional.of("sha256:" + "a".repeat(64)), eval.memo("weight-step", key));
    // a checkpoint deleted by retention and made again is remembered anew
    eval.putMemo("weight-step", key, "sha256:" + "b".repeat(64));
    assertEquals(Optional.of("sha256:" + "b".repeat(64)), gpu.memo("weight-step", key));
  }

  @Test
  void theCacheKeepsItsBoundLeastRecentlyUsedOut(@TempDir Path a) throws IOException {
    ArtifactStore gpu = worker(location(), a, 3L << 20);
    byte[] mib = new byte[1 << 20];
    String[] refs = new String[5];
    for (int i = 0; i < 5; i++) {
      mib[0] = (byte) i;
      refs[i] = gpu.putBytes(mib);
      gpu.path(refs[0]); // the first stays in use
    }
    long cached;
    try (Stream<Path> s = Files.walk(a.resolve("objects"))) {
      cached = s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
    assertTrue(cached <= 3L << 20, "cache holds " + cached + " bytes, bound 3 MiB");
    assertTrue(Files.exists(a.resolve("objects").resolve(refs[0].substring(7, 9))
        .resolve(refs[0].substring(9))), "the most recently used object stayed");
    for (String ref : refs) { // every object still readable: evicted ones come down again
      mib[0] = (byte) List.of(refs).indexOf(ref);
      assertArrayEquals(mib, gpu.getBytes(ref));
    }
  }

  @Test
  void aWorkerStartsOnlyAgainstAStoreItCanUseAndSaysWhichOneItCannot(@TempDir Path a) {
    String loc = location();
    IllegalStateException creds = assertThrows(IllegalStateException.class, () -> new ArtifactStore(a,
        S3Remote.open(loc, s3.endpoint(), S3ProxyProcess.credentials("whale", "wrong")), 0));
    assertTrue(creds.getMessage().contains("s3://" + BUCKET) && creds.getMessage().contains(
        s3.endpoint()) && creds.getMessage().contains("403"), creds.getMessage());
    IllegalStateException bucket = assertThrows(IllegalStateException.class,
        () -> new ArtifactStore(a, s3.remote("s3://no-such-bucket/x"), 0));
    assertTrue(bucket.getMessage().contains("s3://no-such-bucket/x")
        && bucket.getMessage().contains("404"), bucket.getMessage());
    IllegalStateException down = assertThrows(IllegalStateException.class,
        () -> new ArtifactStore(a, S3Remote.open(loc, "http://127.0.0.1:1",
            S3ProxyProcess.credentials("whale", "whale-secret")), 0));
    assertTrue(down.getMessage().contains("http://127.0.0.1:1"), down.getMessage());
    assertThrows(IllegalArgumentException.class, () -> S3Remote.open("s3://Bad_Bucket/x"));
  }

  /**
   * The server dies in the middle of a multipart upload (kill -9 once the first part is on its
   * disk): the put fails, and after a restart no reader ever sees a partial object under the
   * reference; the retried put completes it.
   */
  @Test
  void anUploadCutByTheServerDyingLeavesNothingHalfVisible(@TempDir Path a, @TempDir Path b)
      throws Exception {
    String loc = location();
    ArtifactStore gpu = worker(loc, a, 0);
    Path big = randomFile(gpu, 160, 11);
    String hex = ArtifactStore.sha256Hex(big);
    Path keep = b.resolve("copy.bin");
    Files.copy(big, keep);
    CompletableFuture<String> put = CompletableFuture.supplyAsync(() -> gpu.putFile(big));
    Path bucketDir = s3.data.resolve(BUCKET);
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!put.isDone() && System.nanoTime() < deadline && !partOnDisk(bucketDir, hex)) {
      Thread.sleep(5);
    }
    s3.kill();
    Exception failed = assertThrows(Exception.class, put::join,
        "the upload finished before the server was killed: make the file bigger");
    s3.start();
    ArtifactStore eval = worker(loc, b.resolve("cache"), 0);
    String ref = "sha256:" + hex;
    assertFalse(eval.stored(ref), "no object under the reference after a cut upload: " + failed);
    assertThrows(IllegalArgumentException.class, () -> eval.path(ref));
    assertEquals(ref, gpu.putFile(keep)); // the activity's retry
    assertEquals(hex, ArtifactStore.sha256Hex(eval.path(ref)));
  }

  /** A file of {@code mib} MiB in the store's temporary space, each MiB distinct. */
  private static Path randomFile(ArtifactStore store, int mib, long seed) throws IOException {
    Path file = store.newTempFile(".bin");
    byte[] chunk = new byte[1 << 20];
    new Random(seed).nextBytes(chunk);
    try (OutputStream out = Files.newOutputStream(file)) {
      for (int i = 0; i < mib; i++) {
        chunk[0] = (byte) i;
        out.write(chunk);
      }
    }
    return file;
  }

  private static boolean partOnDisk(Path dir, String hex) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.anyMatch(p -> Files.isRegularFile(p) && p.toString().contains(hex.substring(2)));
    }
  }
}
