package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every validated field of {@link ExperimentSpec}: range edges, unknown fields, cross-field rules. */
class SpecValidatorTest {

  /** The problems SpecJson.parse reports; fails the test if the spec was accepted. */
  static List<String> rejected(String json) {
    InvalidSpecException e = assertThrows(InvalidSpecException.class, () -> SpecJson.parse(json),
        () -> "expected rejection of " + json);
    assertTrue(!e.problems().isEmpty(), "an InvalidSpecException lists at least one problem");
    for (String p : e.problems()) {
      assertTrue(e.getMessage().contains(p), "the message carries every problem: " + p);
    }
    return e.problems();
  }

  static void assertNames(List<String> problems, String field, String json) {
    assertTrue(problems.stream().anyMatch(p -> p.startsWith(field + ": ")),
        () -> json + " should be rejected naming '" + field + "', got " + problems);
  }

  static String nested(String section, String field, String value) {
    return section == null
        ? "{\"" + field + "\": " + value + "}"
        : "{\"" + section + "\": {\"" + field + "\": " + value + "}}";
  }

  @Test
  void defaultSpecIsValid() {
    ExperimentSpec d = ExperimentSpec.defaults();
    assertEquals(List.of(), SpecValidator.problems(d));
    assertSame(d, SpecValidator.validate(d));
    assertEquals(d, SpecJson.parse("{}"));
  }

  // ---- just outside every range ------------------------------------------------------------

  static Stream<Arguments> outside() {
    String longName = "\"" + "x".repeat(101) + "\"";
    return Stream.of(
        Arguments.of(nested(null, "name", "\"\""), "name"),
        Arguments.of(nested(null, "name", "\"   \""), "name"),
        Arguments.of(nested(null, "name", longName), "name"),
        Arguments.of(nested(null, "task", "\"go\""), "task"),
        Arguments.of(nested(null, "schedule", "\"adaptive\""), "schedule"),
        Arguments.of(nested("data", "weightProblems", "7"), "data.weightProblems"),
        Arguments.of(nested("data", "weightProblems", "1000001"), "data.weightProblems"),
        Arguments.of(nested("data", "harnessProblems", "0"), "data.harnessProblems"),
        Arguments.of(nested("data", "harnessProblems", "100001"), "data.harnessProblems"),
        Arguments.of(nested("data", "testProblems", "0"), "data.testProblems"),
        Arguments.of(nested("data", "testProblems", "100001"), "data.testProblems"),
        Arguments.of(nested("model", "contextLength", "31"), "model.contextLength"),
        Arguments.of(nested("model", "contextLength", "4097"), "model.contextLength"),
        Arguments.of(nested("model", "dModel", "7"), "model.dModel"),
        Arguments.of(nested("model", "dModel", "4097"), "model.dModel"),
        Arguments.of(nested("model", "layers", "0"), "model.layers"),
        Arguments.of(nested("model", "layers", "65"), "model.layers"),
        Arguments.of(nested("model", "heads", "0"), "model.heads"),
        Arguments.of(nested("model", "heads", "-4"), "model.heads"),
        Arguments.of(nested("model", "heads", "65"), "model.heads"),
        Arguments.of(nested("model", "pretrainSteps", "-1"), "model.pretrainSteps"),
        Arguments.of(nested("model", "pretrainSteps", "1000001"), "model.pretrainSteps"),
        Arguments.of(nested("model", "pretrainBatch", "0"), "model.pretrainBatch"),
        Arguments.of(nested("model", "pretrainBatch", "4097"), "model.pretrainBatch"),
        Arguments.of(nested("model", "pretrainLearningRate", "0"), "model.pretrainLearningRate"),
        Arguments.of(nested("model", "pretrainLearningRate", "-1e-9"), "model.pretrainLearningRate"),
        Arguments.of(nested("model", "pretrainLearningRate", "1.0000000000000002"),
            "model.pretrainLearningRate"),
        Arguments.of(nested("model", "pretrainDocuments", "0"), "model.pretrainDocuments"),
        Arguments.of(nested("model", "pretrainDocuments", "10000001"), "model.pretrainDocuments"),
        Arguments.of(nested("rsft", "promptsPerStep", "0"), "rsft.promptsPerStep"),
        Arguments.of("{\"data\": {\"weightProblems\": 200000}, \"rsft\": {\"promptsPerStep\": 100001}}",
            "rsft.promptsPerStep"),
        Arguments.of(nested("rsft", "samplesPerPrompt", "0"), "rsft.samplesPerPrompt"),
        Arguments.of(nested("rsft", "samplesPerPrompt", "1025"), "rsft.samplesPerPrompt"),
        Arguments.of(nested("rsft", "temperature", "-1e-9"), "rsft.temperature"),
        Arguments.of(nested("rsft", "temperature", "10.000001"), "rsft.temperature"),
        Arguments.of(nested("rsft", "topK", "-1"), "rsft.topK"),
        Arguments.of(nested("rsft", "topK", "100001"), "rsft.topK"),
        Arguments.of(nested("rsft", "acceptThreshold", "-1e-9"), "rsft.acceptThreshold"),
        Arguments.of(nested("rsft", "acceptThreshold", "1.0000000000000002"), "rsft.acceptThreshold"),
        Arguments.of(nested("rsft", "minibatch", "0"), "rsft.minibatch"),
        Arguments.of(nested("rsft", "minibatch", "100001"), "rsft.minibatch"),
        Arguments.of(nested("rsft", "learningRate", "0"), "rsft.learningRate"),
        Arguments.of(nested("rsft", "learningRate", "0.0"), "rsft.learningRate"),
        Arguments.of(nested("rsft", "learningRate", "1.0000000000000002"), "rsft.learningRate"),
        Arguments.of(nested("rsft", "learningRate", "1e400"), "rsft.learningRate"),
        Arguments.of(nested("phases", "weightEpochsPerPhase", "0"), "phases.weightEpochsPerPhase"),
        Arguments.of(nested("phases", "weightEpochsPerPhase", "1000.0000001"),
            "phases.weightEpochsPerPhase"),
        Arguments.of(nested("phases", "harnessIterationsPerPhase", "0"),
            "phases.harnessIterationsPerPhase"),
        Arguments.of(nested("phases", "harnessIterationsPerPhase", "1001"),
            "phases.harnessIterationsPerPhase"),
        Arguments.of(nested("phases", "weightBudgetEpochs", "0"), "phases.weightBudgetEpochs"),
        Arguments.of(nested("phases", "weightBudgetEpochs", "-6"), "phases.weightBudgetEpochs"),
        Arguments.of(nested("phases", "weightBudgetEpochs", "1000.0000001"),
            "phases.weightBudgetEpochs"),
        Arguments.of(nested("phases", "maxRounds", "0"), "phases.maxRounds"),
        Arguments.of(nested("phases", "maxRounds", "31"), "phases.maxRounds"),
        Arguments.of(nested("harness", "proposer", "\"llm\""), "harness.proposer"),
        Arguments.of(nested("harness", "proposer", "\"\""), "harness.proposer"),
        Arguments.of(nested("harness", "candidatesPerIteration", "0"),
            "harness.candidatesPerIteration"),
        Arguments.of(nested("harness", "candidatesPerIteration", "65"),
            "harness.candidatesPerIteration"),
        Arguments.of(nested("harness", "turnBudget", "0"), "harness.turnBudget"),
        Arguments.of(nested("harness", "turnBudget", "17"), "harness.turnBudget"),
        Arguments.of(nested("harness", "episodeTimeoutSeconds", "0"),
            "harness.episodeTimeoutSeconds"),
        Arguments.of(nested("harness", "episodeTimeoutSeconds", "3601"),
            "harness.episodeTimeoutSeconds"),
        Arguments.of(nested("eval", "k", "0"), "eval.k"),
        Arguments.of(nested("eval", "k", "1025"), "eval.k"),
        Arguments.of(nested("checkpoints", "keepLast", "0"), "checkpoints.keepLast"),
        Arguments.of(nested("checkpoints", "keepLast", "-3"), "checkpoints.keepLast"),
        Arguments.of(nested("checkpoints", "keepLast", "1.5"), "checkpoints.keepLast"),
        Arguments.of(nested("checkpoints", "keepLast", "\"2\""), "checkpoints.keepLast"));
  }

  @ParameterizedTest(name = "[{index}] {1} <- {0}")
  @MethodSource("outside")
  void valueJustOutsideItsRangeIsRejectedByName(String json, String field) {
    assertNames(rejected(json), field, json);
  }

  // ---- on the boundary ---------------------------------------------------------------------

  static Stream<String> boundary() {
    return Stream.of(
        nested(null, "name", "\"a\""),
        nested(null, "name", "\"" + "x".repeat(100) + "\""),
        nested(null, "task", "\"math\""),
        nested(null, "schedule", "\"whale\""),
        "{\"data\": {\"weightProblems\": 8}, \"rsft\": {\"promptsPerStep\": 8}}",
        nested("data", "weightProblems", "1000000"),
        nested("data", "harnessProblems", "1"),
        nested("data", "harnessProblems", "100000"),
        nested("data", "testProblems", "1"),
        nested("data", "testProblems", "100000"),
        nested("data", "seed", "-9223372036854775808"),
        nested("model", "contextLength", "32"),
        nested("model", "contextLength", "4096"),
        "{\"model\": {\"dModel\": 8, \"heads\": 4}}",
        nested("model", "dModel", "4096"),
        nested("model", "layers", "1"),
        nested("model", "layers", "64"),
        nested("model", "heads", "1"),
        nested("model", "heads", "64"),
        nested("model", "pretrainSteps", "0"),
        nested("model", "pretrainSteps", "1000000"),
        nested("model", "pretrainBatch", "1"),
        nested("model", "pretrainBatch", "4096"),
        nested("model", "pretrainLearningRate", "1e-12"),
        nested("model", "pretrainLearningRate", "1"),
        nested("model", "pretrainDocuments", "1"),
        nested("model", "pretrainDocuments", "10000000"),
        nested("rsft", "promptsPerStep", "1"),
        "{\"data\": {\"weightProblems\": 100000}, \"rsft\": {\"promptsPerStep\": 100000}}",
        nested("rsft", "samplesPerPrompt", "1"),
        nested("rsft", "samplesPerPrompt", "1024"),
        nested("rsft", "temperature", "0"),
        nested("rsft", "temperature", "10"),
        nested("rsft", "topK", "0"),
        nested("rsft", "topK", "100000"),
        nested("rsft", "acceptThreshold", "0"),
        nested("rsft", "acceptThreshold", "1"),
        nested("rsft", "minibatch", "1"),
        nested("rsft", "minibatch", "100000"),
        nested("rsft", "learningRate", "1e-12"),
        nested("rsft", "learningRate", "1.0"),
        nested("phases", "weightEpochsPerPhase", "1e-9"),
        nested("phases", "weightEpochsPerPhase", "1000"),
        nested("phases", "harnessIterationsPerPhase", "1"),
        nested("phases", "harnessIterationsPerPhase", "1000"),
        nested("phases", "weightBudgetEpochs", "1e-9"),
        nested("phases", "weightBudgetEpochs", "1000"),
        nested("phases", "maxRounds", "1"),
        nested("phases", "maxRounds", "30"),
        nested("harness", "proposer", "\"template\""),
        nested("harness", "candidatesPerIteration", "1"),
        nested("harness", "candidatesPerIteration", "64"),
        nested("harness", "turnBudget", "1"),
        nested("harness", "turnBudget", "16"),
        nested("harness", "episodeTimeoutSeconds", "1"),
        nested("harness", "episodeTimeoutSeconds", "3600"),
        nested("eval", "k", "1"),
        nested("eval", "k", "1024"),
        nested("checkpoints", "keepLast", "1"));
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @MethodSource("boundary")
  void valueOnTheBoundaryIsAccepted(String json) {
    try {
      ExperimentSpec s = SpecJson.parse(json);
      assertEquals(List.of(), SpecValidator.problems(s));
    } catch (InvalidSpecException e) {
      fail(json + " is on the boundary and must be accepted, got " + e.problems());
    }
  }

  @Test
  void boundaryValuesAreKeptAsGiven() {
    ExperimentSpec s = SpecJson.parse(
        "{\"rsft\": {\"temperature\": 0, \"topK\": 0, \"acceptThreshold\": 1},"
            + " \"harness\": {\"turnBudget\": 16}, \"phases\": {\"maxRounds\": 30}}");
    assertEquals(0.0, s.rsft().temperature());
    assertEquals(0, s.rsft().topK());
    assertEquals(1.0, s.rsft().acceptThreshold());
    assertEquals(16, s.harness().turnBudget());
    assertEquals(30, s.phases().maxRounds());
  }

  @Test
  void checkpointsKeepLastDefaultsToTwoAndItsProblemIsSaidExactly() {
    assertEquals(2, SpecJson.parse("{}").checkpoints().keepLast());
    assertEquals(5, SpecJson.parse("{\"checkpoints\": {\"keepLast\": 5}}").checkpoints().keepLast());
    assertEquals(List.of("checkpoints.keepLast: must be an integer >= 1, got 0"),
        rejected("{\"checkpoints\": {\"keepLast\": 0}}"));
  }

  // ---- unknown fields ----------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"", "data", "model", "rsft", "phases", "harness", "eval", "checkpoints"})
  void unknownFieldIsRejectedByDottedName(String section) {
    String json = section.isEmpty()
        ? "{\"nmae\": \"typo\"}"
        : "{\"" + section + "\": {\"lerningRate\": 0.1}}";
    String expected = section.isEmpty() ? "nmae: unknown field" : section + ".lerningRate: unknown field";
    assertEquals(List.of(expected), rejected(json));
  }

  @Test
  void searchQaJudgeIsParsedAndChecked() {
    ExperimentSpec s = SpecJson.parse("{\"task\": \"searchqa\", \"data\": {\"judge\": {\"baseUrl\": "
        + "\"http://localhost:8000/v1\", \"model\": \"qwen\"}}}");
    assertEquals(List.of(), SpecValidator.problems(s));
    assertEquals("OPENAI_API_KEY", s.data().judge().apiKeyEnv());
    assertEquals(60, s.data().judge().timeoutSeconds());
    assertEquals(s.data().judge(), whale.workflows.activities.TaskRef.of(s).judge());
    assertEquals(null, whale.workflows.activities.TaskRef.of(ExperimentSpec.defaults()).judge());
    List<String> p = rejected("{\"task\": \"math\", \"data\": {\"judge\": {\"baseUrl\": \"ftp://x\", "
        + "\"model\": \"\", \"key\": \"sk-secret\"}}}");
    assertEquals(List.of("data.judge.key: unknown field",
        "data.judge: only the searchqa task has an LLM judge, the task is math",
        "data.judge.baseUrl: the judge needs an http(s) base URL, got 'ftp://x'",
        "data.judge.model: the judge needs a model name"), p);
  }

  @Test
  void typoInRsftIsNamed() {
    assertEquals(List.of("rsft.lerningRate: unknown field"),
        rejected("{\"rsft\": {\"lerningRate\": 0.001}}"));
  }

  @Test
  void everyUnknownFieldInEverySectionIsReported() {
    List<String> p = rejected("{\"zz\": 1, \"aa\": {}, \"rsft\": {\"b\": 1, \"a\": 2},"
        + " \"eval\": {\"pass\": 8}, \"harness\": {\"turns\": 4}}");
    for (String f : List.of("aa", "zz", "rsft.a", "rsft.b", "eval.pass", "harness.turns")) {
      assertTrue(p.contains(f + ": unknown field"), f + " missing from " + p);
    }
    assertEquals(6, p.size(), p.toString());
  }

  @Test
  void fieldNamesAreCaseSensitive() {
    assertEquals(List.of("rsft.LearningRate: unknown field"),
        rejected("{\"rsft\": {\"LearningRate\": 0.001}}"));
  }

  // ---- cross-field checks ------------------------------------------------------------------

  @Test
  void headsMustDivideDModel() {
    List<String> p = rejected("{\"model\": {\"dModel\": 64, \"heads\": 3}}");
    assertEquals(List.of("model.heads: must divide model.dModel (64), got 3"), p);
    assertEquals(List.of(), SpecValidator.problems(SpecJson.parse(
        "{\"model\": {\"dModel\": 96, \"heads\": 3}}")));
    // dModel default 64: heads 6 is in range but does not divide it.
    assertNames(rejected("{\"model\": {\"heads\": 6}}"), "model.heads", "heads 6");
  }

  @Test
  void zeroHeadsIsAProblemNotACrash() {
    // Used to throw ArithmeticException (dModel % 0) from the validator instead of reporting.
    ExperimentSpec s = new ExperimentSpec(null, null, null, null, null,
        new ExperimentSpec.ModelSpec(null, null, null, 0, null, null, null, null, null, null, null,
            null, null, null, null),
        null, null, null, null, null, null, null, null);
    List<String> p = SpecValidator.problems(s);
    assertTrue(p.stream().anyMatch(x -> x.startsWith("model.heads: ")), p.toString());
  }

  @Test
  void promptsPerStepAtMostWeightProblems() {
    assertEquals(List.of("rsft.promptsPerStep: must be at most data.weightProblems (512), got 513"),
        rejected("{\"rsft\": {\"promptsPerStep\": 513}}"));
    SpecJson.parse("{\"rsft\": {\"promptsPerStep\": 512}}");
    assertEquals(List.of("rsft.promptsPerStep: must be at most data.weightProblems (40), got 41"),
        rejected("{\"data\": {\"weightProblems\": 40}, \"rsft\": {\"promptsPerStep\": 41}}"));
    // The default promptsPerStep (32) against a small D_weight.
    assertNames(rejected("{\"data\": {\"weightProblems\": 16}}"), "rsft.promptsPerStep", "16");
  }

  // ---- all problems at once ----------------------------------------------------------------

  @Test
  void multipleProblemsAreAllReported() {
    String json = "{\"task\": \"go\", \"typo\": 1,"
        + " \"model\": {\"dModel\": 64, \"heads\": 5},"
        + " \"rsft\": {\"learningRate\": 0, \"topK\": -1},"
        + " \"harness\": {\"turnBudget\": 17}, \"eval\": {\"k\": 0}}";
    List<String> p = rejected(json);
    for (String f : List.of("task", "typo", "model.heads", "rsft.learningRate", "rsft.topK",
        "harness.turnBudget", "eval.k")) {
      assertNames(p, f, json);
    }
    assertEquals(7, p.size(), p.toString());
  }

  @Test
  void validateThrowsWithTheSameProblemsAsProblems() {
    ExperimentSpec bad = new ExperimentSpec("", "go", null, null, null, null, null,
        new ExperimentSpec.PhaseSpec(0.0, 0, 0.0, 31, null, null, null, null, null, null, null),
        null, null, null, null, null, null);
    List<String> p = SpecValidator.problems(bad);
    assertEquals(6, p.size(), p.toString());
    InvalidSpecException e = assertThrows(InvalidSpecException.class,
        () -> SpecValidator.validate(bad));
    assertEquals(p, e.problems());
    assertThrows(UnsupportedOperationException.class, () -> e.problems().add("x"));
  }

  @Test
  void datasetFormatsAreCheckedPerTaskAndNeedTheirFiles() {
    assertTrue(problemsOf("{\"task\": \"math\", \"data\": {\"format\": \"lichess\", \"trainFile\": \"x\"}}")
        .stream().anyMatch(p -> p.startsWith("data.format: must be one of [builtin, gsm8k, math]")));
    assertTrue(problemsOf("{\"data\": {\"format\": \"gsm8k\"}}")
        .contains("data.trainFile: data.format gsm8k needs a dataset file"));
    assertTrue(problemsOf("{\"data\": {\"testFile\": \"t.jsonl\"}}")
        .stream().anyMatch(p -> p.startsWith("data.testFile: only read when data.format")));
    assertTrue(problemsOf("{\"task\": \"searchqa\", \"data\": {\"format\": \"jsonl\", \"trainFile\": \"q.jsonl\"}}")
        .stream().anyMatch(p -> p.startsWith("data.corpusFile:")));
    assertTrue(problemsOf("{\"data\": {\"format\": \"gsm8k\", \"trainFile\": \"train.jsonl\"}}").isEmpty());
  }

  // ---- bring your own model -----------------------------------------------------------------

  private static final String HF = "\"source\": \"huggingface\", \"path\": \"/models/qwen\"";

  static Stream<Arguments> huggingFaceRefusals() {
    return Stream.of(
        Arguments.of("{\"model\": {\"source\": \"hub\"}}", "model.source",
            "must be one of [builtin, huggingface], got 'hub'"),
        Arguments.of("{\"model\": {\"source\": \"huggingface\"}}", "model.path",
            "needs either model.path (the model directory) or model.name (a model whale fetches, "
            + "see `whale models list`), got neither"),
        Arguments.of("{\"model\": {\"source\": \"huggingface\", \"path\": \" \"}}", "model.path",
            "got neither"),
        Arguments.of("{\"model\": {" + HF + ", \"name\": \"smollm2-135m-instruct\"}}", "model.path",
            "not both"),
        Arguments.of("{\"model\": {\"name\": \"smollm2-135m-instruct\"}}", "model.name",
            "only read when model.source is huggingface"),
        Arguments.of("{\"harness\": {\"initialForm\": \"dialogue\"}}", "harness.initialForm",
            "must be one of [chat, completion, tools], got 'dialogue'"),
        Arguments.of("{\"task\": \"chess\", \"harness\": {\"initialForm\": \"tools\"}}",
            "harness.initialForm", "exists for the math task only, the task is chess"),
        Arguments.of("{\"model\": {\"path\": \"/models/qwen\"}}", "model.path",
            "only read when model.source is huggingface"),
        Arguments.of("{\"model\": {\"dtype\": \"float32\"}}", "model.dtype",
            "only read when model.source is huggingface"),
        Arguments.of("{\"model\": {\"device\": \"cpu\"}}", "model.device",
            "only read when model.source is huggingface"),
        Arguments.of("{\"model\": {" + HF + ", \"dtype\": \"float16\"}, \"rsft\": "
            + "{\"finetune\": \"full\"}}", "model.dtype",
            "float16 holds the frozen base under rsft.finetune lora, but rsft.finetune is full: "
            + "trainable parameters and AdamW moments stay float32"),
        Arguments.of("{\"model\": {" + HF + ", \"dtype\": \"bfloat16\"}}", "model.dtype",
            "bfloat16 is not supported"),
        Arguments.of("{\"model\": {" + HF + ", \"dtype\": \"int8\"}}", "model.dtype",
            "must be one of [float16, float32], got 'int8'"),
        Arguments.of("{\"model\": {" + HF + ", \"device\": \"tpu\"}}", "model.device",
            "must be one of [cpu, cuda], got 'tpu'"),
        Arguments.of("{\"model\": {" + HF + ", \"revision\": \"main\"}}", "model.revision",
            "unknown field"),
        Arguments.of("{\"rsft\": {\"finetune\": \"qlora\"}}", "rsft.finetune",
            "must be one of [full, lora], got 'qlora'"),
        Arguments.of("{\"rsft\": {\"finetune\": \"lora\"}}", "rsft.finetune",
            "lora needs model.source huggingface"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"finetune\": \"full\", "
            + "\"lora\": {\"rank\": 4}}}", "rsft.lora", "only read when rsft.finetune is lora"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"lora\": {\"rank\": 0}}}",
            "rsft.lora.rank", "must be in [1, 4096], got 0"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"lora\": {\"alpha\": 0}}}",
            "rsft.lora.alpha", "must be in (0.0, 1000000.0], got 0.0"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"lora\": {\"targets\": []}}}",
            "rsft.lora.targets", "name at least one module"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"lora\": {\"targets\": [\"qkv\"]}}}",
            "rsft.lora.targets", "got 'qkv'"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"lora\": "
            + "{\"targets\": [\"q_proj\", \"q_proj\"]}}}", "rsft.lora.targets", "named twice"),
        Arguments.of("{\"model\": {" + HF + "}, \"rsft\": {\"lora\": {\"dropout\": 0.1}}}",
            "rsft.lora.dropout", "unknown field"),
        Arguments.of("{\"harness\": {\"maxTemperature\": 11}}", "harness.maxTemperature",
            "must be in [0.0, 10.0], got 11.0"),
        Arguments.of("{\"harness\": {\"maxTemperature\": -0.5}}", "harness.maxTemperature",
            "must be in [0.0, 10.0], got -0.5"),
        Arguments.of("{\"model\": {\"pretrainCorpus\": \"poems\"}}", "model.pretrainCorpus",
            "must be one of [chat], got 'poems'"),
        Arguments.of("{\"task\": \"chess\", \"model\": {\"pretrainCorpus\": \"chat\"}}",
            "model.pretrainCorpus", "the chat corpus exists for the math task only, the task is chess"),
        Arguments.of("{\"model\": {" + HF + ", \"pretrainCorpus\": \"chat\"}}", "model.pretrainCorpus",
            "only read when model.source is builtin"));
  }

  @ParameterizedTest(name = "[{index}] {1} <- {0}")
  @MethodSource("huggingFaceRefusals")
  void huggingFaceFieldRefusedByName(String json, String field, String why) {
    List<String> problems = rejected(json);
    assertTrue(problems.stream().anyMatch(p -> p.startsWith(field + ": ") && p.contains(why)),
        () -> json + " should be rejected as '" + field + ": ..." + why + "', got " + problems);
  }

  @Test
  void huggingFaceSpecTakesItsDefaultsAndBuiltinJsonIsUnchanged() {
    ExperimentSpec hf = SpecJson.parse("{\"model\": {" + HF + "}}");
    assertEquals("float32", hf.model().dtype());
    assertEquals("cpu", hf.model().device());
    assertEquals(Finetune.LORA, hf.finetune());
    assertEquals(new ExperimentSpec.LoraSpec(8, 16.0, List.of("q_proj", "v_proj"), null), hf.lora());
    assertEquals(hf, SpecJson.parse(SpecJson.write(hf)));
    ExperimentSpec full = SpecJson.parse("{\"model\": {" + HF + "}, \"rsft\": {\"finetune\": \"full\"}}");
    assertEquals(Finetune.FULL, full.finetune());
    assertEquals(Finetune.FULL, ExperimentSpec.defaults().finetune());
    // a float16 base under LoRA (the default finetune for huggingface) on cuda is a valid spec
    ExperimentSpec half = SpecJson.parse("{\"model\": {" + HF
        + ", \"dtype\": \"float16\", \"device\": \"cuda\"}}");
    assertEquals("float16", half.model().dtype());
    assertEquals("cuda", half.model().device());
    assertEquals(Finetune.LORA, half.finetune());
    // a model by name, h0 in the chat form
    ExperimentSpec named = SpecJson.parse("{\"model\": {\"source\": \"huggingface\", \"name\": "
        + "\"smollm2-135m-instruct\"}, \"harness\": {\"initialForm\": \"chat\"}}");
    assertEquals("smollm2-135m-instruct", named.model().name());
    assertEquals(null, named.model().path());
    assertEquals("chat", named.harness().initialForm());
    assertEquals(named, SpecJson.parse(SpecJson.write(named)));
    // a builtin spec writes none of the new fields: its JSON (and every memo key) is as before
    String json = SpecJson.write(ExperimentSpec.defaults());
    for (String field : List.of("source", "path", "dtype", "device", "finetune", "lora",
        "initialForm")) {
      assertTrue(!json.contains("\"" + field + "\""), field + " in " + json);
    }
    assertEquals(1, json.split("\"name\"", -1).length - 1, "only the spec's own name: " + json);
  }

  private static List<String> problemsOf(String json) {
    try {
      SpecJson.parse(json);
      return List.of();
    } catch (InvalidSpecException e) {
      return e.problems();
    }
  }

  // ---- rollouts ------------------------------------------------------------------------------

  static final String HF_MODEL = "\"model\": {\"source\": \"huggingface\", \"name\": \"smollm2-135m-instruct\"}";

  @Test
  void vllmRolloutsOnAHuggingFaceLoraRunAreValidAndTravelToEveryEpisode() {
    ExperimentSpec s = SpecJson.parse("{" + HF_MODEL + ", \"rollouts\": {\"backend\": \"vllm\", "
        + "\"servers\": [\"http://10.0.0.5:8000\"], \"maxConcurrentRequests\": 32}}");
    assertEquals(List.of("http://10.0.0.5:8000"),
        whale.workflows.activities.EpisodeSettings.of(s).rollouts().servers());
    // local (or no section) keeps episode settings, and so activity inputs and memo keys, as before
    assertEquals(null, whale.workflows.activities.EpisodeSettings.of(SpecJson.parse("{" + HF_MODEL + "}")).rollouts());
    assertEquals(null, whale.workflows.activities.EpisodeSettings.of(
        SpecJson.parse("{" + HF_MODEL + ", \"rollouts\": {\"backend\": \"local\"}}")).rollouts());
    assertTrue(!SpecJson.write(SpecJson.parse("{}")).contains("rollouts"), "absent stays absent");
  }

  @Test
  void vllmRolloutsRefuseWhatTheyCannotServeByName() {
    String json = "{\"rollouts\": {\"backend\": \"vllm\", \"servers\": [\"ftp://x\"], "
        + "\"timeoutSeconds\": 0, \"maxConcurrentRequests\": 0, \"probeTolerance\": 0, \"bogus\": 1}}";
    List<String> p = rejected(json);
    for (String field : List.of("rollouts.bogus", "rollouts.servers", "rollouts.timeoutSeconds",
        "rollouts.maxConcurrentRequests", "rollouts.probeTolerance", "rollouts.backend")) {
      assertNames(p, field, json);
    }
    assertTrue(p.stream().anyMatch(x -> x.contains("builtin")), p.toString());
    List<String> full = rejected("{" + HF_MODEL + ", \"rsft\": {\"finetune\": \"full\"}, "
        + "\"rollouts\": {\"backend\": \"vllm\"}}");
    assertTrue(full.stream().anyMatch(x -> x.startsWith("rollouts.backend: ") && x.contains("full")), full.toString());
    List<String> backend = rejected("{\"rollouts\": {\"backend\": \"sglang\"}}");
    assertTrue(backend.contains("rollouts.backend: must be one of [local, vllm], got 'sglang'"), backend.toString());
  }
}
