package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.Shape;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Last-position logits of the decoder against transformers' (float32) for every fixture model. */
class LlamaDecoderParityTest {

  @ParameterizedTest
  @ValueSource(strings = {"llama", "llama3", "qwen2", "qwen3", "mistral"})
  void logitsMatchTransformers(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    try (NDManager manager = HfFixtures.manager()) {
      LlamaDecoder decoder = LlamaDecoder.load(HfFixtures.dir(model), manager);
      double worst = 0;
      for (int i = 0; i < g.path("prompts").size(); i++) {
        int[] ids = HfFixtures.ints(g.path("prompts").get(i).path("ids"));
        float[] ours = lastLogits(decoder, manager, ids);
        double diff = HfFixtures.maxAbsDiff(ours, HfFixtures.floats(g.path("lastLogits").get(i)));
        worst = Math.max(worst, diff);
      }
      System.out.printf("%s: max |logit - transformers| = %.3g%n", model, worst);
      assertTrue(worst < 1e-4, model + ": max abs logit difference " + worst);
    }
  }

  /** Logits after the whole prompt, no cache, no padding. */
  static float[] lastLogits(LlamaDecoder decoder, NDManager parent, int[] ids) {
    try (NDManager m = parent.newSubManager()) {
      int[] pos = new int[ids.length];
      for (int t = 0; t < pos.length; t++) {
        pos[t] = t;
      }
      NDArray tokens = m.create(ids, new Shape(1, ids.length));
      NDArray positions = m.create(pos, new Shape(1, ids.length));
      NDArray h = decoder.hidden(tokens, positions, null, null);
      NDArray last = h.get(new NDIndex(":, {}", ids.length - 1));
      return decoder.logits(last).toFloatArray();
    }
  }
}
