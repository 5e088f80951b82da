package whale.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.training.GradientCollector;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AdamWTest {
  /**
   * A step with a non-finite gradient changes no weight and leaves zero gradients that stay in
   * PyTorch's memory. Zeroing them by replacing their storage with a Java buffer (DJL's
   * {@code NDArray.set(float[])}) let the garbage collector free memory that the parameter's .grad
   * still pointed at: the next backward wrote into freed native memory and crashed the JVM
   * ("corrupted double-linked list") once pretraining and sampling ran side by side.
   */
  @Test
  void nonFiniteStepIsSkippedAndItsZeroedGradientsOutliveGarbageCollection() throws Exception {
    try (NDManager manager = NDManager.newBaseManager()) {
      NDArray w = manager.create(new float[] {1, 2, 3, 4});
      w.setRequiresGradient(true);
      Map<String, NDArray> params = Map.of("w", w);
      AdamW opt = new AdamW(params, Set.of("w"), manager);

      backward(w, Float.NaN);
      try (NDScope scope = new NDScope()) {
        assertFalse(opt.step(params, 0.1f), "a NaN gradient skips the update");
      }
      assertArrayEquals(new float[] {1, 2, 3, 4}, w.toFloatArray());

      // Give freed direct buffers every chance to be released and their memory reused.
      List<ByteBuffer> churn = new ArrayList<>();
      for (int round = 0; round < 5; round++) {
        System.gc();
        Thread.sleep(50);
        for (int i = 0; i < 2000; i++) {
          ByteBuffer b = ByteBuffer.allocateDirect(16);
          b.putFloat(0, 7f).putFloat(4, 7f).putFloat(8, 7f).putFloat(12, 7f);
          churn.add(b);
        }
      }
      assertArrayEquals(new float[4], w.getGradient().toFloatArray(), "the gradient is zero, in its own memory");
      churn.clear(); // the churn buffers stayed reachable until the gradient was read

      // The next step sees only its own gradient: d(sum 2w)/dw = 2.
      backward(w, 2f);
      assertArrayEquals(new float[] {2, 2, 2, 2}, w.getGradient().toFloatArray());
      try (NDScope scope = new NDScope()) {
        assertTrue(opt.step(params, 0.1f));
      }
      float[] after = w.toFloatArray();
      for (int i = 0; i < 4; i++) {
        assertTrue(after[i] < i + 1, "the finite step moved weight " + i + " down: " + after[i]);
      }
      opt.close();
    }
  }

  /** One backward pass of sum(w * scale). */
  private static void backward(NDArray w, float scale) {
    try (NDScope scope = new NDScope();
        GradientCollector gc = Engine.getInstance().newGradientCollector()) {
      gc.backward(w.mul(scale).sum());
    }
  }
}
