package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import whale.workflows.WhaleSearchAttributes;

/**
 * {@code temporal server start-dev} as a child process: its own ports and database file, whale's
 * search attributes registered. {@link #kill()} and {@link #start()} restart it on the same file.
 */
public final class DevServer implements AutoCloseable {
  public final Path db;
  public final Path log;
  public final int port = Temporal.freePort();
  public final int uiPort;
  private final int httpPort = Temporal.freePort();
  private final int metricsPort = Temporal.freePort();
  private final boolean ui;
  private Process process;

  private DevServer(Path dir, boolean ui) {
    this.db = dir.resolve("temporal.db");
    this.log = dir.resolve("temporal-server.log");
    this.ui = ui;
    this.uiPort = ui ? Temporal.freePort() : -1;
  }

  /** Starts a dev server with its database and log in {@code dir}; the Web UI only if asked. */
  public static DevServer start(Path dir, boolean ui) {
    DevServer s = new DevServer(dir, ui);
    s.start();
    return s;
  }

  public String address() {
    return "127.0.0.1:" + port;
  }

  public String uiUrl() {
    return "http://127.0.0.1:" + uiPort;
  }

  public synchronized void start() {
    List<String> cmd = new ArrayList<>(List.of(Temporal.binary().toString(), "server", "start-dev",
        "--db-filename", db.toString(), "--ip", "127.0.0.1", "--port", String.valueOf(port),
        "--http-port", String.valueOf(httpPort), "--metrics-port", String.valueOf(metricsPort),
        "--log-level", "warn"));
    if (ui) {
      cmd.addAll(List.of("--ui-port", String.valueOf(uiPort), "--ui-ip", "127.0.0.1"));
    } else {
      cmd.add("--headless");
    }
    cmd.addAll(WhaleSearchAttributes.devServerArgs());
    try {
      process = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    awaitReady();
  }


  private void awaitReady() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        fail("temporal server start-dev exited " + process.exitValue() + ", see " + log);
      }
      if (Temporal.cli(address(), "operator", "namespace", "describe", "--namespace", "default")
          .rc() == 0 && (!ui || uiAnswers())) {
        return;
      }
      sleep(300);
    }
    fail("temporal dev server not ready within 90 s, see " + log);
  }

  private boolean uiAnswers() {
    try {
      var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(uiUrl()))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** kill -9: no chance to flush or say goodbye. */
  public synchronized void kill() {
    process.destroyForcibly();
    waitGone();
  }

  private void waitGone() {
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        fail("dev server did not exit");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public synchronized void close() {
    if (process != null && process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
