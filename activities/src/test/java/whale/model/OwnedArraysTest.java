package whale.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Arrays made from Java values live in libtorch's memory, not in Java direct buffers that only a
 * garbage collection frees (issue 20: a closed full fine-tune's weights and moments stayed
 * resident). The direct-buffer pool is the witness: DJL's own create(float[]) grows it by the
 * array's size, {@link OwnedArrays} leaves it where it was.
 */
public class OwnedArraysTest {
  static final int N = 1 << 20; // 4 MiB of float32 per array

  /** Bytes in Java's direct-buffer pool (the witness of DJL's staging buffers). */
  public static long directBytes() {
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (b.getName().equals("direct")) {
        return b.getMemoryUsed();
      }
    }
    throw new IllegalStateException("no direct buffer pool");
  }

  private static float[] values(float offset) {
    float[] v = new float[N];
    for (int i = 0; i < N; i++) {
      v[i] = offset + i * 1e-3f;
    }
    return v;
  }

  @Test
  void ownedArraysHoldTheValuesOutsideJavasDirectMemory() {
    try (NDManager manager = NDManager.newBaseManager()) {
      float[] v = values(0.5f);
      long before = directBytes();
      try (NDArray djl = manager.create(v, new Shape(1024, 1024))) {
        // the witness works: DJL's copy is a direct buffer of the array's size, kept until a GC
        assertTrue(directBytes() - before >= 4L * N, "DJL's create(float[]) is Java direct memory");
      }
      long mid = directBytes();
      NDArray owned = OwnedArrays.create(manager, v, new Shape(1024, 1024));
      assertTrue(directBytes() - mid < 4L * N / 8, "staging freed at once: "
          + (directBytes() - mid) + " bytes left");
      assertArrayEquals(v, owned.toFloatArray(), "the same values, bit for bit");
      assertThrows(IllegalArgumentException.class,
          () -> OwnedArrays.create(manager, new float[3], new Shape(2, 2)));
    }
  }

  @Test
  void restoredMomentsAreTheCheckpointsValuesInLibtorchsMemory() {
    try (NDManager manager = NDManager.newBaseManager()) {
      NDArray w = manager.zeros(new Shape(1024, 1024));
      AdamW opt = new AdamW(Map.of("w", w), Set.of("w"), manager);
      float[] m = values(1f);
      float[] v = values(2f);
      long before = directBytes();
      opt.restore(7, Map.of("w", m), Map.of("w", v));
      assertTrue(directBytes() - before < 4L * N / 8, "no moment left in Java direct memory");
      assertArrayEquals(m, opt.firstMoment("w").toFloatArray());
      assertArrayEquals(v, opt.secondMoment("w").toFloatArray());
      assertTrue(opt.stepCount() == 7);
    }
  }
}
