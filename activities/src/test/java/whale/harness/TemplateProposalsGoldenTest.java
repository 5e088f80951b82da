package whale.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.activities.TaskCatalog;

/**
 * The built-in proposers' output, pinned: for fixed archives and seeds, every task's template
 * library proposes exactly the candidates recorded in {@code template-proposals.golden} (sha256 of
 * name, hypothesis, changes, axis and source). Written before the three searches became one
 * {@code TemplateSearch}, it proves the refactoring changed no proposal; a deliberate change to the
 * search or a task's heuristics regenerates the file with {@code -Dwhale.golden.write=PATH}.
 */
class TemplateProposalsGoldenTest {
  static final List<String> TASKS = List.of("math", "chess", "searchqa");
  static final long[] SEEDS = {0, 1, 7, 42, 12345};

  @Test
  void proposalsAreTheRecordedOnes() throws Exception {
    List<String> actual = new ArrayList<>();
    for (String task : TASKS) {
      for (long seed : SEEDS) {
        record(actual, task, seed);
      }
    }
    String write = System.getProperty("whale.golden.write");
    if (write != null) {
      Files.write(Path.of(write), actual, StandardCharsets.UTF_8);
    }
    List<String> expected;
    try (InputStream in = getClass().getResourceAsStream("/template-proposals.golden")) {
      assertTrue(in != null, "missing test resource template-proposals.golden");
      expected = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    }
    assertTrue(expected.size() > 500, "golden file too small: " + expected.size());
    for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
      assertEquals(expected.get(i), actual.get(i), "proposal line " + (i + 1));
    }
    assertEquals(expected.size(), actual.size(), "number of proposals");
  }

  /** Every scenario of one task and seed, each proposal as a line "task seed scenario i sha". */
  static void record(List<String> out, String task, long seed) throws IOException {
    TemplateLibrary lib = TaskCatalog.templates(task);
    HarnessCandidate h0 = lib.initial();
    emit(out, task, seed, "initial", List.of(h0));
    emit(out, task, seed, "empty", lib.propose(ArchiveView.empty(), 3, seed, false));
    emit(out, task, seed, "empty-prompt", lib.propose(ArchiveView.empty(), 3, seed, true));
    // h0 alone, its traces showing each symptom the heuristics read
    TraceStats[] symptoms = {
        new TraceStats(16, 0.1, 1, 0.05, 0, 0, 0, 3), // clean
        new TraceStats(16, 0.05, 1, 0.8, 0, 0, 0, 3), // unparseable answers
        new TraceStats(16, 0.2, 12, 0, 0.4, 0, 0, 30), // turn-budget hits
        new TraceStats(16, 0.1, 2, 0, 0, 0.1, 0.3, 3), // errors and timeouts
        new TraceStats(16, 0.1, 1, 0.3, 0.1, 0, 0, 40), // long completions, some of everything
    };
    for (int i = 0; i < symptoms.length; i++) {
      ArchiveView a = new ArchiveView(List.of(ArchiveEntry.scored(h0.name(), h0.source(), symptoms[i])));
      emit(out, task, seed, "h0-" + i, lib.propose(a, 3, seed, false));
      emit(out, task, seed, "h0-" + i + "-prompt", lib.propose(a, 3, seed, true));
    }
    // many rounds: scores from the candidate's name, every fifth one invalid, a foreign entry
    List<ArchiveEntry> entries = new ArrayList<>();
    entries.add(ArchiveEntry.scored("foreign", "public class X {} // WHALE-GENOME: nonsense=1", symptoms[0]));
    entries.add(ArchiveEntry.scored(h0.name(), h0.source(), symptoms[0]));
    for (int round = 0; round < 12; round++) {
      List<HarnessCandidate> cs = lib.propose(new ArchiveView(entries), 3, seed + round, false);
      emit(out, task, seed, "round-" + round, cs);
      for (HarnessCandidate c : cs) {
        int h = Math.floorMod(sha(c.source()).hashCode(), 1000);
        entries.add(entries.size() % 5 == 0 ? ArchiveEntry.invalid(c.name(), c.source(), "line 1:1: broken")
            : ArchiveEntry.scored(c.name(), c.source(), h % 9 == 0 ? TraceStats.EMPTY
                : new TraceStats(16, (h % 17) / 16.0, 1 + h % 5, (h % 7) / 10.0, (h % 3) * 0.04, 0,
                    (h % 11) / 30.0, 5 + h % 40)));
      }
    }
    // only h0 can be a parent (all else invalid): single changes run out and the search explores
    List<ArchiveEntry> dead = new ArrayList<>(List.of(ArchiveEntry.scored(h0.name(), h0.source(), symptoms[0])));
    for (int round = 0; round < 8; round++) {
      List<HarnessCandidate> cs = lib.propose(new ArchiveView(dead), 4, seed * 31 + round, false);
      emit(out, task, seed, "dead-" + round, cs);
      for (HarnessCandidate c : cs) {
        dead.add(ArchiveEntry.invalid(c.name(), c.source(), "line 1:1: broken"));
      }
    }
  }

  static void emit(List<String> out, String task, long seed, String scenario, List<HarnessCandidate> cs) {
    out.add(task + " " + seed + " " + scenario + " n=" + cs.size());
    for (int i = 0; i < cs.size(); i++) {
      HarnessCandidate c = cs.get(i);
      out.add(task + " " + seed + " " + scenario + " " + i + " " + c.name() + " " + c.axis() + " "
          + sha(c.name() + "\u0000" + c.hypothesis() + "\u0000" + c.changes() + "\u0000" + c.axis() + "\u0000"
          + c.source()));
    }
  }

  static String sha(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
