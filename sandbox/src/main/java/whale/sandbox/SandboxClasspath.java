package whale.sandbox;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The class path a sandbox JVM starts with: this module's jar and its runtime dependencies only
 * (the harness API, the model-call records, gRPC, the chat template's Jinja), not the worker's
 * (DJL and libtorch, Temporal, Lucene). The build lists those jars in
 * {@code whale/sandbox/classpath.txt} as {@code lib/<file>} entries, the layout of
 * {@code workers/target} and of the worker images; a worker run from that layout gives its
 * sandboxes exactly them. Anywhere else (tests on Maven's class path, an IDE) the sandbox gets the
 * worker's class path, as before.
 */
public final class SandboxClasspath {
  static final String LIST = "whale/sandbox/classpath.txt";

  private SandboxClasspath() {}

  /** {@code whale.sandbox.classpath} if set, else the narrow class path if whale runs from its layout, else this JVM's. */
  public static String forThisJvm() {
    String set = System.getProperty("whale.sandbox.classpath");
    if (set != null) {
      return set;
    }
    return narrow(ownJar()).orElse(System.getProperty("java.class.path"));
  }

  /**
   * The sandbox's own jar followed by its dependencies, resolved beside it ({@code lib/x.jar}
   * entries against the parent of the folder holding that jar); empty when the jar is not a file
   * in a {@code lib} folder or any listed jar is missing there.
   */
  public static Optional<String> narrow(Path sandboxJar) {
    if (sandboxJar == null || !sandboxJar.toString().endsWith(".jar") || sandboxJar.getParent() == null
        || !sandboxJar.getParent().getFileName().toString().equals("lib")) {
      return Optional.empty();
    }
    Path root = sandboxJar.getParent().getParent();
    List<String> cp = new ArrayList<>();
    cp.add(sandboxJar.toString());
    for (String entry : listed()) {
      Path jar = root.resolve(entry);
      if (!Files.isRegularFile(jar)) {
        return Optional.empty();
      }
      cp.add(jar.toString());
    }
    return Optional.of(String.join(File.pathSeparator, cp));
  }

  /** The dependency entries the build listed ({@code lib/<artifact>-<version>.jar}). */
  static List<String> listed() {
    try (InputStream in = SandboxClasspath.class.getClassLoader().getResourceAsStream(LIST)) {
      if (in == null) {
        throw new IllegalStateException(LIST + " is missing from the sandbox module's jar (a build problem)");
      }
      List<String> out = new ArrayList<>();
      for (String e : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim().split("[:;\\s]+")) {
        if (!e.isBlank()) {
          out.add(e.replace('\\', '/'));
        }
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path ownJar() {
    try {
      return Path.of(SandboxMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | RuntimeException e) {
      return null;
    }
  }
}
