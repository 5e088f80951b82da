package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

class RunTableTest {

  static ExperimentSpec spec(String name, int k) {
    return new ExperimentSpec(name, null, null, null, null, null, null, null, null,
        new ExperimentSpec.EvalSpec(k, null, null), null, null, null, null);
  }

  static List<String> rows(String md) {
    List<String> out = new ArrayList<>();
    for (String line : md.split("\\R")) {
      if (line.startsWith("| ") && !line.startsWith("| round ")) {
        out.add(line);
      }
    }
    return out;
  }

  @Test
  void oneRowPerEvaluationInOrder() {
    List<RunEvent> evals = List.of(
        RunEvent.testEval("base", 0, 0, 0, 0.0625, 0.25, 0.125, 3.0, "ck0", "h0", null),
        RunEvent.testEval("weight", 1, 10, 2560, 0.2, 0.5, 0.1875, 2.5, "ck1", "h0", null),
        RunEvent.testEval("harness", 1, 10, 2560 + 5 * 768, 0.33333, 1.0, 0.0, 2.0, "ck1", "h1", null));
    String md = RunTable.markdown(spec("demo", 8), evals, "h1-name");
    String[] lines = md.split("\\R");
    assertEquals("**demo** · math · schedule whale · harness `h1-name`", lines[0]);
    assertEquals("", lines[1]);
    assertEquals("| round | phase | step | rollouts | mean@8 | pass@8 | maj@8 |", lines[2]);
    assertEquals("|---|---|---|---|---|---|---|", lines[3]);
    assertEquals(List.of(
        "| 0 | base | 0 | 0 | 0.063 | 0.250 | 0.125 |",
        "| 1 | weight | 10 | 2560 | 0.200 | 0.500 | 0.188 |",
        "| 1 | harness | 10 | 6400 | 0.333 | 1.000 | 0.000 |"), rows(md));
    assertEquals(7, lines.length);
    for (String row : rows(md)) {
      assertEquals(8, row.chars().filter(c -> c == '|').count(), "7 columns: " + row);
    }
  }

  @Test
  void rowCountMatchesEvaluationsAndHeaderUsesK() {
    for (int n : new int[] {0, 1, 5, 40}) {
      List<RunEvent> evals = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        evals.add(RunEvent.testEval("weight", i, i * 10, i * 256L, i / 100.0, 0.5, 0.5, 1, "c", "h", null));
      }
      String md = RunTable.markdown(spec("x", 4), evals, "h");
      assertEquals(n, rows(md).size(), md);
      assertTrue(md.contains("| mean@4 | pass@4 | maj@4 |"), md);
    }
  }

  @Test
  void numbersUseADotWhateverTheDefaultLocale() {
    Locale before = Locale.getDefault();
    try {
      Locale.setDefault(Locale.GERMANY);
      String md = RunTable.markdown(spec("de", 8),
          List.of(RunEvent.testEval("weight", 1, 1, 1234567, 0.5, 0.75, 0.25, 1, "c", "h", null)), "h");
      assertEquals(List.of("| 1 | weight | 1 | 1234567 | 0.500 | 0.750 | 0.250 |"), rows(md));
    } finally {
      Locale.setDefault(before);
    }
  }
}
