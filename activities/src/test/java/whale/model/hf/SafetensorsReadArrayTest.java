package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import java.util.Map;
import org.junit.jupiter.api.Test;
import whale.model.OwnedArraysTest;

/**
 * {@link Safetensors#readArray} (file to libtorch, no Java array) gives every tensor exactly the
 * values {@link Safetensors#read} gives, and leaves nothing in Java's direct memory.
 */
class SafetensorsReadArrayTest {
  @Test
  void everyTensorReadsTheSameStraightIntoLibtorch() throws Exception {
    var dir = HfFixtures.dir("qwen2");
    Safetensors st = Safetensors.openDirectory(dir);
    long before = OwnedArraysTest.directBytes();
    long bytes = 0;
    try (NDManager manager = NDManager.newBaseManager()) {
      for (Map.Entry<String, Safetensors.Entry> e : st.entries().entrySet()) {
        long[] shape = e.getValue().shape();
        try (NDArray a = st.readArray(e.getKey(), shape, "the test", manager)) {
          assertArrayEquals(st.read(e.getKey(), shape, "the test"), a.toFloatArray(), e.getKey());
          assertEquals(new ai.djl.ndarray.types.Shape(shape), a.getShape());
          bytes += 4 * a.size();
        }
      }
    }
    assertTrue(bytes > 100_000, "the fixture has weights to read: " + bytes);
    assertTrue(OwnedArraysTest.directBytes() - before < bytes / 10, "staging buffers freed: "
        + (OwnedArraysTest.directBytes() - before) + " of " + bytes + " bytes left in direct memory");
  }
}
