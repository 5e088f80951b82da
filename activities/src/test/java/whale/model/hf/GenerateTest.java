package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.model.SftExample;
import whale.model.TrainStats;

class GenerateTest {
  private static String run(String... args) throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    Generate.run(args, new PrintStream(buf, true, StandardCharsets.UTF_8));
    return buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void jsonMatchesTransformersTokenForToken() throws Exception {
    for (String model : HfFixtures.MODELS) {
      JsonNode g = HfFixtures.golden(model);
      for (int i = 0; i < g.path("prompts").size(); i++) {
        JsonNode p = g.path("prompts").get(i);
        JsonNode out = new ObjectMapper().readTree(run("--model", HfFixtures.dir(model).toString(),
            "--prompt", p.path("text").asText(), "--max-new-tokens", "12", "--json"));
        assertArrayEquals(HfFixtures.ints(g.path("greedy").get(i)), HfFixtures.ints(out.path("tokens")),
            model + " prompt " + i);
        assertArrayEquals(HfFixtures.ints(p.path("ids")), HfFixtures.ints(out.path("promptTokens")));
        assertTrue(out.path("text").isTextual());
      }
    }
  }

  @Test
  void plainTextAndSeededSampling() throws Exception {
    String dir = HfFixtures.dir("qwen2").toString();
    String a = run("--model", dir, "--prompt", "e2e4", "--temperature", "1", "--top-p", "0.9",
        "--seed", "5", "--max-new-tokens", "8");
    assertEquals(a, run("--model", dir, "--prompt", "e2e4", "--temperature", "1", "--top-p", "0.9",
        "--seed", "5", "--max-new-tokens", "8"));
    assertTrue(a.endsWith("\n"));
  }

  @Test
  void badArgumentsNameTheOption() {
    String dir = HfFixtures.dir("qwen2").toString();
    assertTrue(assertThrows(IllegalArgumentException.class, () -> run("--prompt", "x"))
        .getMessage().startsWith("--model is required"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> run("--model", dir, "--prompt", "x", "--top-p", "2")).getMessage().contains("topP"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> run("--model", dir, "--prompt", "x", "--max-new-tokens", "lots")).getMessage()
        .contains("--max-new-tokens"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> run("--model", dir, "--prompt", "x", "--max-new-tokens", "300")).getMessage()
        .contains("max_position_embeddings 256"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> run("--model", "/nonexistent", "--prompt", "x")).getMessage()
        .contains("/nonexistent is not a directory"));
  }

  /** HfModel.sft: an epoch over text examples lowers their loss (LoRA) and changes greedy output. */
  @Test
  void sftOnTextExamplesLearns() throws Exception {
    List<SftExample> examples = List.of(new SftExample("What is 2 + 2?", " 4\n"),
        new SftExample("What is 3 + 3?", " 6\n"), new SftExample("Capital of France?", " Paris\n"));
    try (HfModel m = HfModel.load(HfFixtures.dir("qwen2"), HfModel.LINE)) {
      m.trainLora(new HfModel.LoraSpec(8, 16, List.copyOf(LoraAdapters.TARGETS)), 3);
      TrainStats first = m.sft(examples, 2, 1e-2f, 1);
      TrainStats last = first;
      for (int epoch = 0; epoch < 15; epoch++) {
        last = m.sft(examples, 2, 1e-2f, 2 + epoch);
      }
      assertEquals(2, first.steps());
      assertEquals(m.tokenizer().encodeContinuation(" 4\n").length
          + m.tokenizer().encodeContinuation(" 6\n").length
          + m.tokenizer().encodeContinuation(" Paris\n").length, first.tokens());
      assertTrue(last.meanLoss() < first.meanLoss() * 0.3, first + " -> " + last);
      String answer = m.generate(List.of(new whale.model.GenerationRequest("What is 3 + 3?", 0, 10)),
          Sampling.GREEDY).get(0).text();
      assertEquals(" 6\n", answer, "learned the line and stopped at its newline");
    }
  }
}
