package whale.proposers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import whale.harness.HarnessCandidate;

/**
 * The {@code command} proposer: runs an external program (a coding agent, a script) in a fresh copy
 * of the phase's archive directory, as the Meta-Harness reference does, and collects the candidate
 * files it writes.
 *
 * <p>Protocol: the working directory is the archive copy (API.md: the harness API, summary.json,
 * pareto.json, one directory per
 * candidate with source.java, meta.json, scores.json, traces.json). The environment has
 * {@code WHALE_ARCHIVE} (that directory), {@code WHALE_CANDIDATES_DIR} (an empty directory to write
 * into), {@code WHALE_CANDIDATES} (M), {@code WHALE_ITERATION}, {@code WHALE_SEED} and
 * {@code WHALE_WORKDIR} (the worker's own working directory, for a command's relative paths: the
 * program itself runs in the archive copy). Each candidate
 * is {@code <Name>.java} in the candidates directory, with an optional {@code <Name>.json} holding
 * {@code name}, {@code hypothesis}, {@code changes}, {@code axis}. The first M in file-name order are
 * taken. The program is killed (with its descendants) after the timeout; what it wrote by then counts.
 * Its output goes to {@code proposer.log} next to the archive copy.
 */
public final class CommandProposer {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<String> command;
  private final Duration timeout;

  public CommandProposer(List<String> command, Duration timeout) {
    if (command.isEmpty()) {
      throw new IllegalArgumentException("command proposer: no command");
    }
    this.command = List.copyOf(command);
    this.timeout = timeout;
  }

  public List<HarnessCandidate> propose(Path archiveDir, Path workRoot, int m, int iteration, long seed) {
    try {
      Files.createDirectories(workRoot);
      Path work = Files.createTempDirectory(workRoot, "propose-");
      Path archive = work.resolve("archive");
      copyTree(archiveDir, archive);
      // the API the candidates are written against, beside the archive it reads
      Files.writeString(archive.resolve("API.md"), "# The harness API\n\n" + HarnessApi.TEXT);
      Path out = work.resolve("candidates");
      Files.createDirectories(out);
      Path log = work.resolve("proposer.log");
      ProcessBuilder pb = new ProcessBuilder(command).directory(archive.toFile())
          .redirectErrorStream(true).redirectOutput(log.toFile())
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      pb.environment().put("WHALE_ARCHIVE", archive.toString());
      pb.environment().put("WHALE_CANDIDATES_DIR", out.toString());
      pb.environment().put("WHALE_CANDIDATES", Integer.toString(m));
      pb.environment().put("WHALE_ITERATION", Integer.toString(iteration));
      pb.environment().put("WHALE_SEED", Long.toString(seed));
      pb.environment().put("WHALE_WORKDIR", Path.of("").toAbsolutePath().toString());
      Process p = pb.start();
      boolean finished;
      try {
        finished = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        kill(p);
        Thread.currentThread().interrupt();
        throw new IllegalStateException("command proposer interrupted", e);
      }
      if (!finished) {
        kill(p);
      }
      List<HarnessCandidate> found = collect(out, m);
      if (found.isEmpty()) {
        throw new IllegalStateException("command proposer " + command + (finished
            ? " exited with code " + p.exitValue() : " timed out after " + timeout.toSeconds() + " s")
            + " and wrote no candidate; log tail: " + tail(log));
      }
      return found;
    } catch (IOException e) {
      throw new UncheckedIOException("command proposer failed: " + e, e);
    }
  }

  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    try {
      p.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static List<HarnessCandidate> collect(Path out, int m) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(out)) {
      files = s.filter(f -> f.getFileName().toString().endsWith(".java") && Files.isRegularFile(f))
          .sorted(Comparator.comparing(f -> f.getFileName().toString())).limit(m).toList();
    }
    List<HarnessCandidate> found = new ArrayList<>();
    for (Path f : files) {
      String stem = f.getFileName().toString().replaceFirst("\\.java$", "");
      String source = Files.readString(f, StandardCharsets.UTF_8);
      String name = stem;
      String hypothesis = "";
      String changes = "";
      String axis = "command";
      Path meta = f.resolveSibling(stem + ".json");
      if (Files.isRegularFile(meta)) {
        try {
          JsonNode n = JSON.readTree(meta.toFile());
          name = n.path("name").asText(name);
          hypothesis = n.path("hypothesis").asText("");
          changes = n.path("changes").asText("");
          axis = n.path("axis").asText(axis);
        } catch (IOException e) {
          hypothesis = "(unreadable " + meta.getFileName() + ": " + e.getMessage() + ")";
        }
      }
      found.add(new HarnessCandidate(name, hypothesis, changes, axis, source));
    }
    return found;
  }

  private static String tail(Path log) {
    try {
      String s = Files.readString(log, StandardCharsets.UTF_8);
      return s.length() > 2000 ? s.substring(s.length() - 2000) : s;
    } catch (IOException e) {
      return "(no log)";
    }
  }

  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Path t = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(t);
        } else if (Files.isRegularFile(p)) {
          Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }
}
