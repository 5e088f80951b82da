package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Reading and writing spec files: types, syntax, defaults and round trips. */
class SpecJsonTest {

  static InvalidSpecException rejected(String json) {
    return assertThrows(InvalidSpecException.class, () -> SpecJson.parse(json),
        () -> "expected rejection of " + json);
  }

  // ---- wrong JSON types --------------------------------------------------------------------

  static Stream<Arguments> wrongTypes() {
    return Stream.of(
        Arguments.of("{\"seed\": \"one\"}", "seed"),
        Arguments.of("{\"seed\": 1.5}", "seed"),
        Arguments.of("{\"data\": {\"weightProblems\": \"many\"}}", "data.weightProblems"),
        Arguments.of("{\"data\": {\"seed\": [1]}}", "data.seed"),
        Arguments.of("{\"model\": {\"heads\": \"4\"}}", "model.heads"),
        Arguments.of("{\"model\": {\"pretrainLearningRate\": {}}}", "model.pretrainLearningRate"),
        Arguments.of("{\"rsft\": {\"learningRate\": \"fast\"}}", "rsft.learningRate"),
        Arguments.of("{\"rsft\": {\"learningRate\": \"0.001\"}}", "rsft.learningRate"),
        Arguments.of("{\"rsft\": {\"topK\": \"20\"}}", "rsft.topK"),
        Arguments.of("{\"rsft\": {\"topK\": true}}", "rsft.topK"),
        Arguments.of("{\"rsft\": {\"samplesPerPrompt\": 8.5}}", "rsft.samplesPerPrompt"),
        Arguments.of("{\"phases\": {\"maxRounds\": 3.5}}", "phases.maxRounds"),
        Arguments.of("{\"phases\": {\"weightBudgetEpochs\": \"6\"}}", "phases.weightBudgetEpochs"),
        Arguments.of("{\"harness\": {\"turnBudget\": \"sixteen\"}}", "harness.turnBudget"),
        Arguments.of("{\"eval\": {\"k\": false}}", "eval.k"),
        Arguments.of("{\"rsft\": 5}", "rsft"),
        Arguments.of("{\"eval\": [8]}", "eval"),
        Arguments.of("{\"data\": {\"weightProblems\": 99999999999}}", "data.weightProblems"));
  }

  @ParameterizedTest(name = "[{index}] {1} <- {0}")
  @MethodSource("wrongTypes")
  void wrongTypeIsRejectedNamingTheField(String json, String field) {
    InvalidSpecException e = rejected(json);
    assertEquals(1, e.problems().size(), e.problems().toString());
    assertTrue(e.problems().get(0).startsWith(field + ": "),
        () -> "expected the problem to name " + field + ", got " + e.problems());
  }

  @Test
  void integersAreAcceptedWhereDecimalsAreExpected() {
    ExperimentSpec s = SpecJson.parse(
        "{\"rsft\": {\"learningRate\": 1, \"temperature\": 2}, \"phases\": {\"weightBudgetEpochs\": 4}}");
    assertEquals(1.0, s.rsft().learningRate());
    assertEquals(2.0, s.rsft().temperature());
    assertEquals(4.0, s.phases().weightBudgetEpochs());
  }

  // ---- malformed JSON ----------------------------------------------------------------------

  @Test
  void malformedJsonNamesTheLine() {
    String json = "{\n  \"name\": \"a\",\n  \"seed\": ,\n  \"task\": \"math\"\n}";
    InvalidSpecException e = rejected(json);
    assertEquals(1, e.problems().size());
    String p = e.problems().get(0);
    assertTrue(p.startsWith("spec: not valid JSON"), p);
    assertTrue(p.contains("line 3"), p);
  }

  @Test
  void unterminatedAndTrailingGarbageAreRejected() {
    assertTrue(rejected("{\"name\": \"a\"").problems().get(0).startsWith("spec: "));
    assertTrue(rejected("{\"name\": \"a\",}").problems().get(0).startsWith("spec: "));
    assertTrue(rejected("{name: \"a\"}").problems().get(0).startsWith("spec: not valid JSON"));
    // A second document after the spec must not be silently ignored.
    assertTrue(rejected("{\"seed\": 1} {\"seed\": 2}").problems().get(0).startsWith("spec: "));
    assertTrue(rejected("{\"seed\": 1} x").problems().get(0).startsWith("spec: "));
  }

  @Test
  void emptyOrNonObjectDocumentsAreRejected() {
    for (String json : List.of("", "   ", "null", "[]", "42", "\"spec\"")) {
      InvalidSpecException e = rejected(json);
      assertTrue(e.problems().get(0).startsWith("spec: "), json + " -> " + e.problems());
    }
  }

  // ---- defaults ----------------------------------------------------------------------------

  @Test
  void omittedFieldsTakeTheDocumentedDefaults() {
    ExperimentSpec s = SpecJson.parse("{}");
    assertEquals(0.6, s.phases().weightEpochsPerPhase()); // E
    assertEquals(6, s.phases().harnessIterationsPerPhase()); // I
    assertEquals(30, s.phases().maxRounds());
    assertEquals(8, s.rsft().samplesPerPrompt()); // n
    assertEquals(3, s.harness().candidatesPerIteration()); // M
    assertEquals(8, s.eval().k()); // mean@8
    assertEquals(16, s.harness().turnBudget());
    assertEquals(1.0, s.rsft().temperature());
    assertEquals(20, s.rsft().topK());
    assertEquals(0.5, s.rsft().acceptThreshold());
    assertEquals(64, s.rsft().minibatch());
    assertEquals(256, s.data().harnessProblems()); // D_harness
    assertEquals("math", s.task());
    assertEquals("whale", s.schedule());
    assertEquals("template", s.harness().proposer());
    assertEquals(Map.of(), s.unknown());
  }

  @Test
  void partialSectionKeepsTheOtherDefaults() {
    ExperimentSpec s = SpecJson.parse("{\"rsft\": {\"topK\": 5}, \"phases\": {\"maxRounds\": 2}}");
    assertEquals(5, s.rsft().topK());
    assertEquals(8, s.rsft().samplesPerPrompt());
    assertEquals(1.0, s.rsft().temperature());
    assertEquals(0.5, s.rsft().acceptThreshold());
    assertEquals(2, s.phases().maxRounds());
    assertEquals(0.6, s.phases().weightEpochsPerPhase());
    assertEquals(ExperimentSpec.HarnessSpec.defaults(), s.harness());
  }

  @Test
  void explicitNullsTakeTheDefaults() {
    assertEquals(ExperimentSpec.defaults(), SpecJson.parse(
        "{\"name\": null, \"seed\": null, \"rsft\": {\"topK\": null}, \"eval\": null}"));
  }

  // ---- round trip --------------------------------------------------------------------------

  @Test
  void defaultSpecRoundTrips() {
    ExperimentSpec d = ExperimentSpec.defaults();
    String json = SpecJson.write(d);
    assertEquals(d, SpecJson.parse(json));
    assertEquals(json, SpecJson.write(SpecJson.parse(json)));
    assertTrue(!json.contains("unknown"), "the unknown-field bag is not written: " + json);
  }

  @Test
  void nonDefaultSpecRoundTripsUnchanged() {
    ExperimentSpec s = new ExperimentSpec("run-7 \"quoted\" ünïcode", "math", -42L, "whale",
        new ExperimentSpec.DataSpec(Long.MAX_VALUE, 1000, 64, 32, null, null, null, null, null,
            null),
        ExperimentSpec.ModelSpec.builtin(256, 96, 3, 3, 0, 16, 1e-4, 500),
        new ExperimentSpec.RsftSpec(100, 4, 0.7, 0, 0.25, 16, 0.1 + 0.2, null, null, null),
        new ExperimentSpec.PhaseSpec(0.3, 2, 1.7, 5, null, null, null, null, null, null, null),
        new ExperimentSpec.HarnessSpec("template", 5, 12, 3600, null, null, null, null, null, null,
            null, null, null),
        new ExperimentSpec.EvalSpec(4, null, null), null, null, null, null);
    assertEquals(List.of(), SpecValidator.problems(s));
    ExperimentSpec back = SpecJson.parse(SpecJson.write(s));
    assertEquals(s, back);
    assertNotEquals(ExperimentSpec.defaults(), back);
  }

  @Test
  void randomValidSpecsRoundTrip() {
    java.util.Random rnd = new java.util.Random(7);
    for (int i = 0; i < 300; i++) {
      int heads = 1 << rnd.nextInt(4);
      int weight = 8 + rnd.nextInt(5000);
      ExperimentSpec s = new ExperimentSpec("r" + i, null, rnd.nextLong(), null,
          new ExperimentSpec.DataSpec(rnd.nextLong(), weight, 1 + rnd.nextInt(1000),
              1 + rnd.nextInt(1000), null, null, null, null, null, null),
          ExperimentSpec.ModelSpec.builtin(32 + rnd.nextInt(1000), heads * (8 + rnd.nextInt(64)),
              1 + rnd.nextInt(8), heads, rnd.nextInt(1000), 1 + rnd.nextInt(128),
              1e-6 + rnd.nextDouble() * 0.5, 1 + rnd.nextInt(1000)),
          new ExperimentSpec.RsftSpec(1 + rnd.nextInt(weight), 1 + rnd.nextInt(16),
              rnd.nextDouble() * 10, rnd.nextInt(100), rnd.nextDouble(), 1 + rnd.nextInt(128),
              1e-9 + rnd.nextDouble() * 0.9, null, null, null),
          new ExperimentSpec.PhaseSpec(1e-3 + rnd.nextDouble() * 5, 1 + rnd.nextInt(20),
              1e-3 + rnd.nextDouble() * 20, 1 + rnd.nextInt(30), null, null, null, null, null, null,
              null),
          new ExperimentSpec.HarnessSpec(null, 1 + rnd.nextInt(64), 1 + rnd.nextInt(16),
              1 + rnd.nextInt(3600), null, null, null, null, null, null, null, null, null),
          new ExperimentSpec.EvalSpec(1 + rnd.nextInt(1024), null, null), null, null, null, null);
      assertEquals(List.of(), SpecValidator.problems(s), s.toString());
      assertEquals(s, SpecJson.parse(SpecJson.write(s)));
    }
  }

  @Test
  void aComparisonPassesCheckpointRetentionToEveryCellAndChecksIt() {
    ComparisonSpec c = SpecJson.parseComparison(
        "{\"experiment\": {\"checkpoints\": {\"keepLast\": 3}}, \"schedules\": [\"whale\"]}");
    assertEquals(3, c.experiment().withScheduleAndSeed("fst", 9).checkpoints().keepLast());
    InvalidSpecException e = assertThrows(InvalidSpecException.class, () -> SpecJson.parseComparison(
        "{\"experiment\": {\"checkpoints\": {\"keepLast\": 0, \"every\": 1}}}"));
    assertEquals(List.of("experiment.checkpoints.every: unknown field",
        "experiment.checkpoints.keepLast: must be an integer >= 1, got 0"), e.problems());
    // a spec without the section (every spec before it) keeps its meaning and round-trips
    ExperimentSpec old = SpecJson.parse("{\"name\": \"old\"}");
    assertEquals(ExperimentSpec.CheckpointSpec.defaults(), old.checkpoints());
    assertEquals(old, SpecJson.parse(SpecJson.write(old)));
  }
}
