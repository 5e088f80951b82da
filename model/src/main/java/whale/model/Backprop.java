package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.pytorch.engine.PtNDArray;
import ai.djl.pytorch.jni.JniUtils;

/**
 * Backward passes recorded on the calling thread: grad mode on while open, as it was before when
 * closed. libtorch's grad mode is per thread, so two models train at once on two threads (a
 * comparison's cells on a machine's cores). DJL's GradientCollector does the same two calls but
 * allows one collector per JVM (a static flag), which had serialised every training of a process.
 * Gradients accumulate in each parameter's .grad until {@link AdamW#step} zeroes them.
 */
public final class Backprop implements AutoCloseable {
  private final boolean before;

  public Backprop() {
    before = JniUtils.isGradMode();
    JniUtils.setGradMode(true);
  }

  /** d target / d parameters, added to their gradients (target a scalar, as DJL's backward). */
  public void backward(NDArray target) {
    try (NDArray seed = target.onesLike()) {
      JniUtils.backward((PtNDArray) target, (PtNDArray) seed, false, false);
    }
  }

  /**
   * Sends {@code gradient} (d loss / d output, output's shape) back through the graph that made
   * {@code output}: one segment of a backward pass done in pieces (activation checkpointing).
   */
  public void backward(NDArray output, NDArray gradient) {
    JniUtils.backward((PtNDArray) output, (PtNDArray) gradient, false, false);
  }

  @Override
  public void close() {
    JniUtils.setGradMode(before);
  }
}
