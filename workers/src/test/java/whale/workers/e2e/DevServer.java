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
  public final Host host;
  public final int port;
  public final int uiPort;
  private final int httpPort;
  private final int metricsPort;
  private final boolean ui;
  private Process process;

  private DevServer(Path dir, boolean ui, Host host) {
    if (ui && !host.local()) {
      throw new IllegalArgumentException("the Web UI check reaches the server from this JVM: local only");
    }
    this.db = dir.resolve("temporal.db");
    this.log = dir.resolve("temporal-server.log");
    this.ui = ui;
    this.host = host;
    // a host of its own has its own ports: the standard ones; on this machine, free ones
    this.port = host.local() ? Temporal.freePort() : 7233;
    this.httpPort = host.local() ? Temporal.freePort() : 7243;
    this.metricsPort = host.local() ? Temporal.freePort() : 7244;
    this.uiPort = !ui ? -1 : host.local() ? Temporal.freePort() : 8233;
  }

  /** Starts a dev server with its database and log in {@code dir}; the Web UI only if asked. */
  public static DevServer start(Path dir, boolean ui) {
    return start(dir, ui, Host.LOCAL);
  }

  /** A dev server on {@code host}, bound to the host's address only. */
  public static DevServer start(Path dir, boolean ui, Host host) {
    DevServer s = new DevServer(dir, ui, host);
    s.start();
    return s;
  }

  /**
   * start-dev binds its internal services to --ip but has them dial each other on 127.0.0.1, so
   * any address but loopback or 0.0.0.0 leaves it unable to start a workflow (seen with CLI 1.9.1;
   * temporalite had the same limit). On a host of its own (a network namespace holding only its
   * loopback and its one link) 0.0.0.0 is that host's address and loopback, nothing more.
   */
  private String bindIp() {
    return host.local() ? host.ip : "0.0.0.0";
  }

  public String address() {
    return host.ip + ":" + port;
  }

  public String uiUrl() {
    return "http://" + host.ip + ":" + uiPort;
  }

  public synchronized void start() {
    List<String> cmd = new ArrayList<>(List.of(Temporal.binary().toString(), "server", "start-dev",
        "--db-filename", db.toString(), "--ip", bindIp(), "--port", String.valueOf(port),
        "--http-port", String.valueOf(httpPort), "--metrics-port", String.valueOf(metricsPort),
        "--log-level", "warn"));
    if (ui) {
      cmd.addAll(List.of("--ui-port", String.valueOf(uiPort), "--ui-ip", host.ip));
    } else {
      cmd.add("--headless");
    }
    cmd.addAll(WhaleSearchAttributes.devServerArgs());
    try {
      process = new ProcessBuilder(host.command(cmd)).redirectErrorStream(true)
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
      if (Temporal.cli(host, Duration.ofSeconds(60), address(), "operator", "namespace",
          "describe", "--namespace", "default").rc() == 0 && (!ui || uiAnswers())) {
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
