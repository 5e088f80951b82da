package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar whale-workers.jar worker --queues Q --address A --artifacts DIR}: a worker as
 * users run it, in its own JVM, which a test can kill -9 and start again.
 */
public final class WorkerProcess implements AutoCloseable {
  public final String queues;
  private final String address;
  private final String artifacts;
  public final Path log;
  public final Host host;
  private final Map<String, String> env;
  private final List<String> args;
  private Process process;
  private int starts;

  public WorkerProcess(String queues, String address, Path artifacts, Path logDir) {
    this(queues, address, artifacts.toString(), logDir, Host.LOCAL, Map.of(), List.of());
  }

  /**
   * A worker on {@code host} whose artifact store is {@code artifacts} (a directory, or an
   * s3://bucket/prefix URI), with {@code env} added to its environment and {@code args} to its
   * command line (e.g. {@code --cache DIR}).
   */
  public WorkerProcess(String queues, String address, String artifacts, Path logDir, Host host,
      Map<String, String> env, List<String> args) {
    this.queues = queues;
    this.address = address;
    this.artifacts = artifacts;
    this.log = logDir.resolve("worker-" + queues.replace(',', '-') + ".log");
    this.host = host;
    this.env = Map.copyOf(env);
    this.args = List.copyOf(args);
  }

  static Path jar() {
    Path jar = Path.of(System.getProperty("whale.jar", "target/whale-workers.jar"));
    if (!Files.isRegularFile(jar)) {
      fail("worker jar not built: " + jar.toAbsolutePath());
    }
    return jar;
  }

  public WorkerProcess start() {
    Path javaBin = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> cmd = new ArrayList<>(List.of(javaBin.toString(), "-Xmx512m", "-XX:+UseSerialGC",
        "-Dai.djl.offline=true", "-Dai.djl.pytorch.num_threads=1",
        "-jar", jar().toString(), "worker", "--queues", queues, "--address", address,
        "--artifacts", artifacts));
    cmd.addAll(args);
    try {
      long before = Files.exists(log) ? Files.size(log) : 0;
      ProcessBuilder pb = new ProcessBuilder(host.command(cmd)).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      pb.environment().put("DJL_OFFLINE", "true");
      pb.environment().put("OPT_OUT_TRACKING", "true");
      pb.environment().putAll(env);
      Files.writeString(log, "\n=== start " + (++starts) + " on " + host + ": "
              + String.join(" ", cmd) + "\n",
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      process = pb.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline) {
        if (!process.isAlive()) {
          fail("worker " + queues + " exited " + process.exitValue() + ", see " + log);
        }
        String text = Files.readString(log);
        if (text.length() > before && text.substring((int) before).contains("whale worker on")) {
          return this;
        }
        DevServer.sleep(100);
      }
      return fail("worker " + queues + " not up within 60 s, see " + log);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public long pid() {
    return process.pid();
  }

  public boolean alive() {
    return process != null && process.isAlive();
  }

  /**
   * SIGSTOP: the JVM stands still, its connections open, so the server goes on handing it tasks
   * that it neither runs nor reports (a hung machine); {@link #kill9()} ends it.
   */
  public void freeze() {
    signal("STOP");
  }

  private void signal(String sig) {
    try {
      Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(process.pid())).start();
      if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
        fail("kill -" + sig + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGKILL to the worker and every process it started, as when its machine or container dies. */
  public void kill9() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        fail("worker " + queues + " survived SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    if (alive()) {
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
