package whale.store;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * S3Proxy (the real server, filesystem blobstore) as its own process on loopback, which a test can
 * kill and start again on the same data. Its self-contained jar is copied to target/s3proxy by the
 * build.
 */
public final class S3ProxyProcess implements AutoCloseable {
  public static final String IDENTITY = "whale";
  public static final String CREDENTIAL = "whale-secret";

  public final Path data;
  public final int port;
  private final Path log;
  private Process process;

  public S3ProxyProcess(Path dir, String... buckets) throws IOException {
    this.data = dir.resolve("data");
    for (String b : buckets) {
      Files.createDirectories(data.resolve(b)); // a filesystem-blobstore bucket is a directory
    }
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    this.log = Path.of("target", "s3proxy-" + port + ".log"); // kept for a failed run
    Files.writeString(dir.resolve("s3proxy.conf"), String.join("\n",
        "s3proxy.endpoint=" + endpoint(),
        "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=" + IDENTITY,
        "s3proxy.credential=" + CREDENTIAL,
        "jclouds.provider=filesystem",
        "jclouds.filesystem.basedir=" + data) + "\n");
    start();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  public S3Remote remote(String location) {
    return S3Remote.open(location, endpoint(), credentials(IDENTITY, CREDENTIAL));
  }

  public static StaticCredentialsProvider credentials(String id, String secret) {
    return StaticCredentialsProvider.create(AwsBasicCredentials.create(id, secret));
  }

  public void start() throws IOException {
    Path jar = Path.of("target/s3proxy/s3proxy.jar"); // each module's build copies it there
    if (!Files.isRegularFile(jar)) {
      fail("S3Proxy's jar is not at " + jar.toAbsolutePath() + " (the build copies it there)");
    }
    process = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString(), "-Xmx256m", "-jar", jar.toString(), "--properties",
        data.resolveSibling("s3proxy.conf").toString()))
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        fail("S3Proxy exited " + process.exitValue() + ": " + Files.readString(log));
      }
      try (Socket ignored = new Socket("127.0.0.1", port)) {
        return;
      } catch (IOException e) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException ie) {
          throw new IllegalStateException(ie);
        }
      }
    }
    fail("S3Proxy did not listen on " + port + " within 60 s: " + Files.readString(log));
  }

  /** kill -9: the server vanishes mid-request. */
  public void kill() throws InterruptedException {
    process.destroyForcibly().waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      kill();
    }
  }
}
