package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * S3Proxy ({@code org.gaul:s3proxy}, jar-with-dependencies, copied to target/s3proxy by the pom) as
 * a child process: a real S3 endpoint over HTTP with v2/v4 signatures, storing objects as files
 * under {@code dir/s3data}, one directory per bucket.
 */
public final class S3Server implements AutoCloseable {
  public static final String IDENTITY = "whale";
  public static final String CREDENTIAL = "whale-secret";

  public final Host host;
  public final int port;
  public final Path data;
  public final Path log;
  private final Process process;

  private S3Server(Host host, int port, Path data, Path log, Process process) {
    this.host = host;
    this.port = port;
    this.data = data;
    this.log = log;
    this.process = process;
  }

  static Path jar() {
    Path jar = Path.of(System.getProperty("s3proxy.jar", "target/s3proxy/s3proxy.jar"));
    if (!Files.isRegularFile(jar)) {
      fail("S3Proxy jar missing (the workers pom copies it at generate-test-resources): "
          + jar.toAbsolutePath());
    }
    return jar;
  }

  /** Starts S3Proxy on {@code host}:8080 (a free port when local) with {@code buckets} made. */
  public static S3Server start(Path dir, Host host, String... buckets) throws IOException {
    int port = host.local() ? Temporal.freePort() : 8080;
    Path data = Files.createDirectories(dir.resolve("s3data"));
    for (String b : buckets) {
      Files.createDirectories(data.resolve(b)); // a bucket of the filesystem store is a directory
    }
    Path props = dir.resolve("s3proxy.properties");
    Files.writeString(props, String.join("\n",
        "s3proxy.endpoint=http://" + host.ip + ":" + port,
        "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=" + IDENTITY,
        "s3proxy.credential=" + CREDENTIAL,
        "jclouds.provider=filesystem",
        "jclouds.filesystem.basedir=" + data) + "\n");
    Path log = dir.resolve("s3proxy.log");
    Path javaBin = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p = new ProcessBuilder(host.command(List.of(javaBin.toString(), "-Xmx256m",
        "-XX:+UseSerialGC", "-jar", jar().toString(), "--properties", props.toString())))
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    S3Server s = new S3Server(host, port, data, log, p);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        fail("S3Proxy exited " + p.exitValue() + ", see " + log);
      }
      // Jetty's line once the connector listens: "Started ...ServerConnector@...{10.77.0.3:8080}"
      for (String line : Files.readAllLines(log)) {
        if (line.contains("Started") && line.contains("ServerConnector")) {
          return s;
        }
      }
      DevServer.sleep(200);
    }
    s.close();
    return fail("S3Proxy not up within 60 s, see " + log);
  }

  public String endpoint() {
    return "http://" + host.ip + ":" + port;
  }

  /** What an S3 client needs in its environment to use this server. */
  public Map<String, String> clientEnv() {
    return Map.of("AWS_ENDPOINT_URL", endpoint(), "AWS_ACCESS_KEY_ID", IDENTITY,
        "AWS_SECRET_ACCESS_KEY", CREDENTIAL, "AWS_REGION", "us-east-1");
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}
