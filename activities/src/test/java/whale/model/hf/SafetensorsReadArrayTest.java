package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Safetensors#readArray} (file to libtorch, no Java array) gives every tensor exactly the
 * values {@link Safetensors#read} gives, and leaves nothing in Java's direct memory.
 */
class SafetensorsReadArrayTest {
  private static long directBytes() {
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (b.getName().equals("direct")) {
        return b.getMemoryUsed();
      }
    }
    throw new IllegalStateException("no direct buffer pool");
  }

  @Test
  void everyTensorReadsTheSameStraightIntoLibtorch() throws Exception {
    var dir = HfFixtures.dir("qwen2");
    Safetensors st = Safetensors.openDirectory(dir);
    long before = directBytes();
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
    assertTrue(directBytes() - before < bytes / 10, "staging buffers freed: "
        + (directBytes() - before) + " of " + bytes + " bytes left in direct memory");
  }
}
