package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDManager;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.model.SftExample;

/**
 * Exports reload to the same logits, in whale and (run activities/src/test/python/
 * check_hf_export.py on target/hf-export afterwards) in transformers and peft.
 */
class HfExportTest {
  /** Stable, so the Python check can find what the last run wrote. */
  static final Path OUT = Path.of("target", "hf-export");
  static final List<SftExample> EXAMPLES = List.of(new SftExample("What is 2 + 2?", " 4\n"),
      new SftExample("Capital of France?", " Paris\n"));

  private static List<int[]> prompts(String model) {
    List<int[]> out = new ArrayList<>();
    for (JsonNode p : HfFixtures.golden(model).path("prompts")) {
      out.add(HfFixtures.ints(p.path("ids")));
    }
    return out;
  }

  private static float[][] logits(LlamaDecoder d, NDManager m, List<int[]> prompts) {
    float[][] out = new float[prompts.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = LlamaDecoderParityTest.lastLogits(d, m, prompts.get(i));
    }
    return out;
  }

  private static double maxDiff(float[][] a, float[][] b) {
    double worst = 0;
    for (int i = 0; i < a.length; i++) {
      worst = Math.max(worst, HfFixtures.maxAbsDiff(a[i], b[i]));
    }
    return worst;
  }

  private static void record(ObjectNode all, String name, String base, String adapter,
      List<int[]> prompts, float[][] logits) {
    ObjectNode o = all.putObject(name);
    o.put("model", base);
    if (adapter != null) {
      o.put("adapter", adapter);
    }
    var ps = o.putArray("prompts");
    prompts.forEach(p -> {
      var a = ps.addArray();
      for (int id : p) {
        a.add(id);
      }
    });
    var ls = o.putArray("lastLogits");
    for (float[] l : logits) {
      var a = ls.addArray();
      for (float v : l) {
        a.add(v);
      }
    }
  }

  @Test
  void loraAdapterMergedAndFullExportsReloadToTheSameLogits() throws Exception {
    ObjectNode record = new ObjectMapper().createObjectNode();
    Path adapterDir = OUT.resolve("qwen2-lora").toAbsolutePath();
    Path mergedDir = OUT.resolve("qwen2-merged").toAbsolutePath();
    Path fullDir = OUT.resolve("llama-full").toAbsolutePath();
    List<int[]> qp = prompts("qwen2");
    float[][] trained;
    try (HfModel m = HfModel.load(HfFixtures.dir("qwen2"), HfModel.LINE)) {
      m.trainLora(new HfModel.LoraSpec(4, 8, List.of("q_proj", "v_proj", "o_proj", "up_proj")), 1);
      for (int epoch = 0; epoch < 5; epoch++) {
        m.sft(EXAMPLES, 2, 1e-2f, epoch);
      }
      trained = logits(m.decoder(), m.manager(), qp);
      HfExport.exportAdapter(m.decoder(), HfFixtures.dir("qwen2"), adapterDir);
      HfExport.exportModel(m.decoder(), HfFixtures.dir("qwen2"), mergedDir, true);
      assertThrows(IllegalArgumentException.class,
          () -> HfExport.exportModel(m.decoder(), HfFixtures.dir("qwen2"), mergedDir, false));
    }
    try (NDManager nm = NDManager.newBaseManager()) {
      LlamaDecoder base = LlamaDecoder.load(HfFixtures.dir("qwen2"), nm);
      float[][] untrained = logits(base, nm, qp);
      assertTrue(maxDiff(untrained, trained) > 1e-2, "training moved the logits");
      LoraAdapters.load(base, nm, adapterDir);
      double adapterDiff = maxDiff(logits(base, nm, qp), trained);
      LlamaDecoder merged = LlamaDecoder.load(mergedDir, nm);
      double mergedDiff = maxDiff(logits(merged, nm, qp), trained);
      System.out.printf("reloaded adapter: %.3g, merged: %.3g max |logit diff|%n", adapterDiff,
          mergedDiff);
      assertTrue(adapterDiff < 1e-6, "adapter " + adapterDiff);
      assertTrue(mergedDiff < 1e-4, "merged " + mergedDiff);
    }
    record(record, "qwen2-lora", HfFixtures.dir("qwen2").toString(), adapterDir.toString(), qp,
        trained);
    record(record, "qwen2-merged", mergedDir.toString(), null, qp, trained);

    List<int[]> lp = prompts("llama");
    float[][] full;
    try (HfModel m = HfModel.load(HfFixtures.dir("llama"), HfModel.LINE)) {
      m.trainFull();
      for (int epoch = 0; epoch < 3; epoch++) {
        m.sft(EXAMPLES, 2, 3e-3f, epoch);
      }
      full = logits(m.decoder(), m.manager(), lp);
      HfExport.exportModel(m.decoder(), HfFixtures.dir("llama"), fullDir, false);
    }
    try (HfModel reloaded = HfModel.load(fullDir, HfModel.LINE)) {
      float[][] again = logits(reloaded.decoder(), reloaded.manager(), lp);
      for (int i = 0; i < full.length; i++) {
        assertArrayEquals(full[i], again[i], "float32 weights round-trip exactly");
      }
      assertTrue(Files.exists(fullDir.resolve("tokenizer.json")));
    }
    record(record, "llama-full", fullDir.toString(), null, lp, full);
    new ObjectMapper().writeValue(OUT.resolve("whale-logits.json").toFile(), record);
  }
}
