package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;
import whale.model.SftExample;

/**
 * Models of one directory share its base weights ({@link LlamaDecoder#loadShared}): one copy in
 * memory, alive while any of them is; LoRA training leaves them as they were; full fine-tuning
 * trains a copy of its own, or the shared arrays themselves when no other model uses them (taken
 * out of sharing first).
 */
class SharedBaseTest {
  static final int[] PROMPT = {1, 5, 9, 2};
  static final List<SftExample> EXAMPLES = List.of(new SftExample("What is 2 + 2?", " 4\n"),
      new SftExample("Capital of France?", " Paris\n"));

  private static float[] logits(HfModel m) {
    return LlamaDecoderParityTest.lastLogits(m.decoder(), m.manager(), PROMPT);
  }

  @Test
  void modelsOfOneDirectoryShareTheirBaseAndTrainingNeverWritesIt() throws Exception {
    var dir = HfFixtures.dir("qwen2");
    String w = "model.layers.0.mlp.up_proj.weight";
    try (HfModel a = HfModel.load(dir, HfModel.LINE)) {
      float[] before = logits(a);
      try (HfModel lora = HfModel.load(dir, HfModel.LINE);
           HfModel full = HfModel.load(dir, HfModel.LINE)) {
        assertSame(a.decoder().weights().get(w), lora.decoder().weights().get(w), "one copy");
        assertSame(a.decoder().weights().get(w), full.decoder().weights().get(w));
        lora.trainLora(new HfModel.LoraSpec(4, 8, List.of("q_proj", "v_proj", "up_proj")), 1);
        full.trainFull();
        assertNotSame(a.decoder().weights().get(w), full.decoder().weights().get(w),
            "full fine-tuning trains its own copy");
        for (int i = 0; i < 3; i++) {
          lora.sft(EXAMPLES, 2, 5e-2f, i);
          full.sft(EXAMPLES, 2, 5e-2f, i);
        }
        assertFalse(java.util.Arrays.equals(before, logits(lora)), "the adapters trained");
        assertFalse(java.util.Arrays.equals(before, logits(full)), "the copy trained");
        assertFalse(a.decoder().weights().get(w).hasGradient(), "the shared base never trains");
      }
      // both others closed: the base is still there, unchanged
      assertArrayEquals(before, logits(a));
      try (HfModel again = HfModel.load(dir, HfModel.LINE)) {
        assertSame(a.decoder().weights().get(w), again.decoder().weights().get(w));
      }
    }
    // the last user closed it: a new load reads the directory again
    try (HfModel fresh = HfModel.load(dir, HfModel.LINE)) {
      assertFalse(fresh.decoder().weights().get(w).isReleased());
      logits(fresh); // usable
    }
  }

  @Test
  void aFullFineTuneThatIsTheOnlyUserTakesTheSharedWeightsAndALaterLoadReadsTheDirectoryAgain()
      throws Exception {
    var dir = HfFixtures.dir("qwen2");
    String w = "model.layers.0.mlp.up_proj.weight";
    float[] before;
    try (HfModel full = HfModel.load(dir, HfModel.LINE)) {
      before = logits(full);
      ai.djl.ndarray.NDArray shared = full.decoder().weights().get(w);
      full.trainFull();
      assertSame(shared, full.decoder().weights().get(w), "taken over, not copied");
      for (int i = 0; i < 3; i++) {
        full.sft(EXAMPLES, 2, 5e-2f, i);
      }
      assertFalse(java.util.Arrays.equals(before, logits(full)), "the weights trained");
      // while the trained model is open, a new load must not be handed its (changed) arrays
      try (HfModel other = HfModel.load(dir, HfModel.LINE)) {
        assertNotSame(shared, other.decoder().weights().get(w));
        assertArrayEquals(before, logits(other), "the directory's weights, untrained");
      }
    }
  }
}
