package whale.model;

import ai.djl.ndarray.NDArray;

/**
 * Scalar operands for tensors on the autograd path.
 *
 * <p>DJL's {@code mul(Number)}, {@code div(Number)}, {@code add(Number)} wrap the number in a tensor
 * whose storage is a Java direct buffer and close it as soon as the forward op returns. Autograd has
 * saved that tensor for the backward pass, so once a garbage collection frees the buffer, backward
 * reads freed memory: every gradient of the step comes out scaled wrong while the loss is exact. That
 * was the "same seed, different model" between processes: it struck only when a collection fell
 * between a step's forward and backward (twin models in one JVM with -Xmx64m diverged at step 9; never
 * with collections forced between steps). A scalar made here belongs to the array's manager, which
 * outlives the backward pass.
 */
public final class Scalars {
  private Scalars() {}

  /** {@code value} as a float32 scalar tensor owned by {@code like}'s manager. */
  public static NDArray of(NDArray like, double value) {
    return like.getManager().create((float) value);
  }
}
