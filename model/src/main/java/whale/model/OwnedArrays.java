package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;

/**
 * Float arrays in memory libtorch owns, for values read into Java (weights, AdamW moments).
 *
 * <p>DJL's {@code create(float[])} and {@code set(float[])} copy the values into a direct
 * ByteBuffer and hand libtorch that buffer's memory ({@code torch::from_blob}): the tensor lives in
 * Java's direct memory, which goes back only when the garbage collector finds the buffer, not when
 * the array is closed. With a Java heap that barely moves, that was never: a closed model or a
 * replaced optimizer state stayed resident (measured on a full fine-tune of SmolLM2-135M: after
 * closing the model and a malloc_trim, 1.7 GB still resident; a resumed step peaked 1.6 GB above
 * a fresh one). Here the values are cloned into libtorch's own memory, freed on close like every
 * computed tensor, and the staging buffer is freed at once.
 */
public final class OwnedArrays {
  private static final sun.misc.Unsafe UNSAFE = unsafe();

  private OwnedArrays() {}

  /** A float32 array of {@code shape} holding {@code values}, attached to {@code manager}. */
  public static NDArray create(NDManager manager, float[] values, Shape shape) {
    if (values.length != shape.size()) {
      throw new IllegalArgumentException(values.length + " values for shape " + shape);
    }
    ByteBuffer staging = ByteBuffer.allocateDirect(values.length * Float.BYTES)
        .order(ByteOrder.nativeOrder());
    staging.asFloatBuffer().put(values);
    return cloneAndFree(manager, staging, shape);
  }

  /**
   * A float32 array of {@code shape} read from {@code ch} at {@code pos} (little-endian, as
   * safetensors stores it), through a direct staging buffer only: never the Java heap. Null where
   * that cannot be done (a big-endian machine, 2 GB or more), for the caller's float[] path.
   */
  public static NDArray read(NDManager manager, FileChannel ch, long pos, Shape shape)
      throws IOException {
    long bytes = shape.size() * Float.BYTES;
    if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN || bytes > Integer.MAX_VALUE - 8) {
      return null;
    }
    ByteBuffer staging = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
    try {
      while (staging.hasRemaining()) {
        if (ch.read(staging, pos + staging.position()) < 0) {
          throw new IOException("unexpected end of file at byte " + (pos + staging.position()));
        }
      }
    } catch (IOException | RuntimeException e) {
      free(staging);
      throw e;
    }
    return cloneAndFree(manager, staging.flip(), shape);
  }

  private static NDArray cloneAndFree(NDManager manager, ByteBuffer staging, Shape shape) {
    try (NDArray view = manager.create(staging, shape, DataType.FLOAT32)) {
      return view.duplicate(); // libtorch's clone: its own storage, the same bytes
    } finally {
      free(staging); // nothing refers to it any more: the clone is a copy
    }
  }

  /**
   * Frees a direct buffer's memory, or unmaps a mapped one, now rather than at the garbage
   * collection that finds it; the buffer must not be used afterwards.
   */
  public static void free(ByteBuffer direct) {
    UNSAFE.invokeCleaner(direct);
  }

  private static sun.misc.Unsafe unsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("sun.misc.Unsafe (jdk.unsupported) is needed to free direct"
          + " buffers at once", e);
    }
  }
}
