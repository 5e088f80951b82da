package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import whale.model.GcStorm;

/**
 * Garbage collection must not change the Hugging Face decoder's training (as
 * {@code whale.model.GcDuringTrainingTest} for the built-in model). The LoRA scale was a scalar
 * tensor on a Java buffer, made inside a layer's NDScope and closed with it before the backward
 * pass that reads it (see {@link whale.model.Scalars}): before the fix the LoRA twins in
 * {@link HfTwinTraining} parted at step 0, and the SmolLM2 learning test's second step kept 26
 * rollouts instead of 45 under a small young generation.
 */
class HfGcDuringTrainingTest {
  @Test
  void twinModelsStayBitIdenticalUnderAGarbageCollectionStorm() throws Exception {
    String out = GcStorm.runChild(HfTwinTraining.class, "8");
    assertTrue(out.contains("twins identical after 8 steps in every mode"), out);
  }
}
