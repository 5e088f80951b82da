import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import whale.store.ArtifactStore;
import whale.store.S3Remote;

/**
 * The S3 store's transfer rates on one checkpoint-sized object (bench/s3-bench.sh starts S3Proxy on
 * loopback and sets AWS_ENDPOINT_URL and the keys): put (sha256 + multipart upload) through
 * ArtifactStore.putFile, then a read from a second, empty cache (streamed download + sha256 check)
 * through ArtifactStore.path, as a worker on another machine does. Not a test.
 *    java -cp ... bench/S3Bench.java s3://bucket/prefix MB WORKDIR
 */
public class S3Bench {
  public static void main(String[] args) throws Exception {
    String location = args[0];
    long mb = Long.parseLong(args[1]);
    Path work = Path.of(args[2]);
    ArtifactStore gpu = new ArtifactStore(work.resolve("cache-gpu"), S3Remote.open(location), 0);
    Path file = gpu.newTempFile(".bin");
    byte[] chunk = new byte[1 << 20];
    Random rnd = new Random(System.nanoTime()); // fresh bytes: never already in the bucket
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long i = 0; i < mb; i++) {
        rnd.nextBytes(chunk);
        out.write(chunk);
      }
    }
    long t0 = System.nanoTime();
    String ref = gpu.putFile(file);
    double up = (System.nanoTime() - t0) / 1e9;
    ArtifactStore eval = new ArtifactStore(work.resolve("cache-eval"), S3Remote.open(location), 0);
    long t1 = System.nanoTime();
    Path down = eval.path(ref);
    double get = (System.nanoTime() - t1) / 1e9;
    long t2 = System.nanoTime();
    eval.path(ref); // cached: the check alone
    double cached = (System.nanoTime() - t2) / 1e9;
    System.out.printf(Locale.ROOT, "S3 store, %d MB object: put %.1f s (%.0f MB/s), first read on "
        + "another cache %.1f s (%.0f MB/s), cached read %.1f s (%.0f MB/s; the sha256 check)%n",
        mb, up, mb / up, get, mb / get, cached, mb / cached);
    Files.delete(down);
  }
}
