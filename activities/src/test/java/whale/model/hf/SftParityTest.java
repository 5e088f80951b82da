package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDManager;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The masked SFT loss and its gradients, full and LoRA, against transformers and peft. */
class SftParityTest {
  @TempDir Path tmp;

  static List<SftTrainer.Example> goldenBatch(JsonNode g) {
    List<SftTrainer.Example> batch = new ArrayList<>();
    for (JsonNode row : g.path("sft").path("rows")) {
      batch.add(SftTrainer.Example.of(HfFixtures.ints(row.path("prompt")),
          HfFixtures.ints(row.path("completion"))));
    }
    return batch;
  }

  /** Largest |ours - theirs| / theirs over every parameter; the name sets must agree. */
  static double maxRelativeDiff(Map<String, Double> ours, JsonNode golden) {
    assertEquals(golden.size(), ours.size(), "parameters with gradients: " + ours.keySet());
    double worst = 0;
    for (Iterator<Map.Entry<String, JsonNode>> it = golden.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Double mine = ours.get(e.getKey());
      assertTrue(mine != null, "no gradient for " + e.getKey());
      double theirs = e.getValue().asDouble();
      worst = Math.max(worst, Math.abs(mine - theirs) / Math.max(theirs, 1e-12));
    }
    return worst;
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama", "llama3", "qwen2", "qwen3", "mistral"})
  void fullFineTuningLossAndGradientsMatchTransformers(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    try (NDManager m = HfFixtures.manager()) {
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir(model), m);
      try (SftTrainer t = SftTrainer.full(d, m)) {
        float[] loss = new float[1];
        Map<String, Double> norms = t.gradientNorms(goldenBatch(g), loss);
        double lossDiff = Math.abs(loss[0] - g.path("sft").path("loss").asDouble());
        double gradDiff = maxRelativeDiff(norms, g.path("sft").path("gradNorms"));
        System.out.printf("%s full: |loss diff| = %.3g, max relative grad-norm diff = %.3g%n",
            model, lossDiff, gradDiff);
        assertTrue(lossDiff < 1e-5, model + " loss diff " + lossDiff);
        assertTrue(gradDiff < 1e-4, model + " grad-norm relative diff " + gradDiff);
      }
    }
  }

  /**
   * Activation checkpointing (recomputing each layer in the backward pass) changes no number: the
   * same loss, and every parameter's gradient within float32 reordering of the kept-activation
   * path's, full and LoRA; the full tests above run it (it is a full fine-tune's default).
   */
  @ParameterizedTest
  @ValueSource(strings = {"llama", "qwen2"})
  void activationCheckpointingGivesTheSameGradients(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    try (NDManager m = HfFixtures.manager()) {
      List<SftTrainer.Example> batch = goldenBatch(g);
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir(model), m);
      try (SftTrainer t = SftTrainer.full(d, m)) {
        float[] kept = new float[1];
        float[] recomputed = new float[1];
        Map<String, Double> a = t.activationCheckpointing(false).gradientNorms(batch, 2, kept);
        Map<String, Double> b = t.activationCheckpointing(true).gradientNorms(batch, 2, recomputed);
        assertEquals(a.keySet(), b.keySet());
        double worst = 0;
        for (String name : a.keySet()) {
          worst = Math.max(worst, Math.abs(a.get(name) - b.get(name)) / Math.max(a.get(name), 1e-12));
        }
        System.out.printf("%s full, checkpointed vs kept: |loss diff| = %.3g, max relative "
            + "grad-norm diff = %.3g%n", model, Math.abs(kept[0] - recomputed[0]), worst);
        assertEquals(kept[0], recomputed[0], 1e-6f);
        assertTrue(worst < 1e-5, "grad-norm relative diff " + worst);
      }
      LlamaDecoder l = LlamaDecoder.load(HfFixtures.dir(model), m);
      LoraAdapters.load(l, m, HfFixtures.dir(model).resolve("lora"));
      try (SftTrainer t = SftTrainer.lora(l, m).activationCheckpointing(true)) {
        float[] loss = new float[1];
        Map<String, Double> norms = t.gradientNorms(batch, loss);
        double gradDiff = maxRelativeDiff(norms, g.path("lora").path("gradNorms"));
        assertTrue(Math.abs(loss[0] - g.path("lora").path("loss").asDouble()) < 1e-5);
        assertTrue(gradDiff < 1e-4, model + " checkpointed LoRA grad-norm relative diff " + gradDiff);
        assertTrue(l.weights().values().stream().noneMatch(w -> w.hasGradient()),
            "base weights are frozen");
      }
    }
  }

  /** One row at a time, gradients accumulated: still the whole batch's loss and gradients. */
  @Test
  void gradientAccumulationGivesTheWholeBatchGradients() throws Exception {
    JsonNode g = HfFixtures.golden("qwen2");
    try (NDManager m = HfFixtures.manager()) {
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir("qwen2"), m);
      try (SftTrainer t = SftTrainer.full(d, m)) {
        float[] loss = new float[1];
        Map<String, Double> norms = t.gradientNorms(goldenBatch(g), 1, loss);
        double lossDiff = Math.abs(loss[0] - g.path("sft").path("loss").asDouble());
        double gradDiff = maxRelativeDiff(norms, g.path("sft").path("gradNorms"));
        System.out.printf("qwen2 full, micro-batches of 1: |loss diff| = %.3g, max relative "
            + "grad-norm diff = %.3g%n", lossDiff, gradDiff);
        assertTrue(lossDiff < 1e-5, "loss diff " + lossDiff);
        assertTrue(gradDiff < 1e-4, "grad-norm relative diff " + gradDiff);
      }
    }
  }

  /** Micro-batches are cut by rows and by padded tokens; a row longer than the cap goes alone. */
  @Test
  void microBatchesStayWithinTheTokenCap() {
    List<SftTrainer.Example> b = new java.util.ArrayList<>();
    for (int len : new int[] {11, 11, 21, 101, 6, 6, 6, 6}) {
      b.add(new SftTrainer.Example(new int[len], new boolean[len]));
    }
    // widths (ids - 1): 10 10 20 100 5 5 5 5; cap 40 tokens, 8 rows at most
    assertEquals(2, SftTrainer.microEnd(b, 0, 8, 1024, 40)); // 2 x 10 fits, 3 x 20 does not
    assertEquals(3, SftTrainer.microEnd(b, 2, 8, 1024, 40)); // 20 alone (2 x 100 > 40)
    assertEquals(4, SftTrainer.microEnd(b, 3, 8, 1024, 40)); // 100 alone, over the cap
    assertEquals(8, SftTrainer.microEnd(b, 4, 8, 1024, 40)); // 4 x 5 = 20
    assertEquals(6, SftTrainer.microEnd(b, 4, 2, 1024, 40)); // the row cap
    assertEquals(4, SftTrainer.microEnd(b, 2, 8, 15, 40)); // a 15-token context: 2 x 15 fits
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama", "qwen2"})
  void peftAdapterLogitsLossAndGradientsMatch(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    JsonNode lora = g.path("lora");
    try (NDManager m = HfFixtures.manager()) {
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir(model), m);
      LoraAdapters.load(d, m, HfFixtures.dir(model).resolve("lora"));
      assertEquals(7 * d.config().layers(), d.adapters().size(), "all seven projections per layer");
      double worst = 0;
      for (int i = 0; i < g.path("prompts").size(); i++) {
        int[] ids = HfFixtures.ints(g.path("prompts").get(i).path("ids"));
        float[] ours = LlamaDecoderParityTest.lastLogits(d, m, ids);
        worst = Math.max(worst, HfFixtures.maxAbsDiff(ours,
            HfFixtures.floats(lora.path("lastLogits").get(i))));
        // the adapter matters: its logits are far from the base model's
        assertTrue(HfFixtures.maxAbsDiff(ours, HfFixtures.floats(g.path("lastLogits").get(i))) > 1e-2);
      }
      try (SftTrainer t = SftTrainer.lora(d, m)) {
        float[] loss = new float[1];
        Map<String, Double> norms = t.gradientNorms(goldenBatch(g), loss);
        double lossDiff = Math.abs(loss[0] - lora.path("loss").asDouble());
        double gradDiff = maxRelativeDiff(norms, lora.path("gradNorms"));
        System.out.printf("%s lora: max |logit diff| = %.3g, |loss diff| = %.3g, max relative "
            + "grad-norm diff = %.3g%n", model, worst, lossDiff, gradDiff);
        assertTrue(worst < 1e-4, model + " LoRA logits diff " + worst);
        assertTrue(lossDiff < 1e-5, model + " LoRA loss diff " + lossDiff);
        assertTrue(gradDiff < 1e-4, model + " LoRA grad-norm relative diff " + gradDiff);
        assertTrue(d.weights().values().stream().noneMatch(w -> w.hasGradient()),
            "base weights are frozen");
      }
    }
  }

  @Test
  void freshLoraStartsAtTheBaseAndTrainsOnlyTheAdapter() throws Exception {
    JsonNode g = HfFixtures.golden("qwen3");
    try (NDManager m = HfFixtures.manager()) {
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir("qwen3"), m);
      int[] ids = HfFixtures.ints(g.path("prompts").get(0).path("ids"));
      float[] base = LlamaDecoderParityTest.lastLogits(d, m, ids);
      float[] q0 = d.weights().get("model.layers.0.self_attn.q_proj.weight").toFloatArray();
      LoraAdapters.attachFresh(d, m, 4, 8, List.of("q_proj", "v_proj", "down_proj"), 7);
      assertArrayEquals(base, LlamaDecoderParityTest.lastLogits(d, m, ids), "B = 0: no change");
      List<SftTrainer.Example> batch = goldenBatch(g);
      try (SftTrainer t = SftTrainer.lora(d, m)) {
        assertEquals(2 * 3 * 2, t.trainable().size());
        float first = t.step(batch, 1e-2f);
        float last = first;
        for (int i = 0; i < 30; i++) {
          last = t.step(batch, 1e-2f);
        }
        System.out.printf("fresh LoRA on qwen3: loss %.4f -> %.4f in 31 steps%n", first, last);
        assertTrue(last < first - 0.5, first + " -> " + last);
        assertEquals(31, t.optimizerSteps());
      }
      assertArrayEquals(q0, d.weights().get("model.layers.0.self_attn.q_proj.weight").toFloatArray(),
          "the base stays frozen");
    }
  }

  @Test
  void fullFineTuningLearns() throws Exception {
    JsonNode g = HfFixtures.golden("llama3");
    try (NDManager m = HfFixtures.manager()) {
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir("llama3"), m);
      List<SftTrainer.Example> batch = goldenBatch(g);
      try (SftTrainer t = SftTrainer.full(d, m)) {
        float before = t.loss(batch);
        for (int i = 0; i < 20; i++) {
          t.step(batch, 3e-3f);
        }
        float after = t.loss(batch);
        System.out.printf("full fine-tuning on llama3: loss %.4f -> %.4f in 20 steps%n", before, after);
        assertTrue(after < before * 0.5, before + " -> " + after);
      }
    }
  }

  @Test
  void unsupportedAdapterSettingsAreRefused() throws Exception {
    Path dir = tmp.resolve("lora");
    Files.createDirectories(dir);
    Path src = HfFixtures.dir("llama").resolve("lora");
    Files.copy(src.resolve(LoraAdapters.WEIGHTS), dir.resolve(LoraAdapters.WEIGHTS));
    ObjectMapper json = new ObjectMapper();
    ObjectNode c = (ObjectNode) json.readTree(src.resolve(LoraAdapters.CONFIG).toFile());
    c.put("use_dora", true);
    json.writeValue(dir.resolve(LoraAdapters.CONFIG).toFile(), c);
    try (NDManager m = HfFixtures.manager()) {
      LlamaDecoder d = LlamaDecoder.load(HfFixtures.dir("llama"), m);
      String msg = assertThrows(IOException.class, () -> LoraAdapters.load(d, m, dir)).getMessage();
      assertTrue(msg.contains("adapter_config.json") && msg.contains("\"use_dora\""), msg);
      c.put("use_dora", false);
      c.put("r", 8);
      json.writeValue(dir.resolve(LoraAdapters.CONFIG).toFile(), c);
      msg = assertThrows(IOException.class, () -> LoraAdapters.load(d, m, dir)).getMessage();
      assertTrue(msg.contains("adapter_model.safetensors") && msg.contains("lora_A.weight")
          && msg.contains("has shape [4, ") && msg.contains("implies [8, "), msg);
      assertThrows(IllegalArgumentException.class,
          () -> LoraAdapters.attachFresh(d, m, 4, 8, List.of("qkv_proj"), 1));
    }
  }
}
