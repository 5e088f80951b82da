package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

/**
 * Scalar operands for tensors on the autograd path.
 *
 * <p>DJL's {@code mul(Number)}, {@code div(Number)}, {@code add(Number)} and {@code create(float)}
 * make a tensor whose storage is a Java direct buffer ({@code torch::from_blob}). Autograd saves
 * such an operand for the backward pass, but holds only the libtorch tensor, not the buffer: once
 * the NDArray is closed (by DJL at the end of a scalar op, or by an {@code NDScope}) a garbage
 * collection frees the buffer, and backward reads freed memory. Every gradient of the step comes out
 * wrong while the loss is exact. That was "same seed, different model" between processes, twice:
 * TinyGpt's {@code mul(Number)} (twins in one JVM with -Xmx64m parted at step 9), and the LoRA scale
 * of the Hugging Face decoder, made inside a layer's NDScope and closed before backward (one LoRA
 * gradient under a collection storm: Infinity instead of 0.17; the SmolLM2 RSFT learning test with
 * a 2 MB young generation accepted 26 rollouts at step 2 instead of 45).
 *
 * <p>A scalar made here is a copy in libtorch's own memory, attached to {@code like}'s manager:
 * closing it drops only Java's reference, and autograd's reference keeps the value alive.
 */
public final class Scalars {
  private Scalars() {}

  /** {@code value} as a float32 scalar tensor owned by {@code like}'s manager. */
  public static NDArray of(NDArray like, double value) {
    return OwnedArrays.create(like.getManager(), new float[] {(float) value}, new Shape());
  }
}
