package whale.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Garbage collection must not change training. DJL's scalar ops ({@code mul(Number)} and friends)
 * free their operand's Java buffer while autograd still holds it for the backward pass; a collection
 * between forward and backward then scaled every gradient wrong (see {@link Scalars}). Before the fix
 * the twins in {@link TwinTraining} parted within the first few steps.
 */
class GcDuringTrainingTest {
  @Test
  void twinModelsStayBitIdenticalUnderAGarbageCollectionStorm() throws Exception {
    String out = GcStorm.runChild(TwinTraining.class, "40");
    assertTrue(out.contains("twins identical after 40 steps"), out);
  }
}
