package whale.model;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;

/**
 * Bounds what glibc's malloc keeps of the native memory libtorch frees. By default glibc serves an
 * allocation of 128 KiB or more with its own mapping, returned to the system on free, but every
 * such free raises that threshold to the freed size (up to 32 MiB): after the first few sampling
 * batches every activation tensor came from the per-thread heaps ("arenas"), which keep freed
 * space for reuse and fragment. {@code whale compare examples/math-compare.json} grew to 13.6 GB
 * resident that way while the Java heap stayed under 250 MB (on a smaller grid a malloc_trim of
 * the running process gave back half of its 2.6 GB). A fixed threshold turns the adjustment off, so large tensors go back to the system
 * when closed; small ones stay in the heaps, which glibc trims above 128 KiB free at their top.
 *
 * <p>{@code -Dwhale.mallocMmapThreshold=BYTES} sets another threshold; 0 leaves glibc's dynamic
 * default. Nothing is changed off Linux or without glibc (musl has no such threshold).
 */
public final class NativeHeap {
  /** The threshold set unless {@code whale.mallocMmapThreshold} says otherwise: glibc's default start. */
  public static final int DEFAULT_MMAP_THRESHOLD = 128 * 1024;

  // mallopt parameters, from glibc's malloc.h
  private static final int M_TRIM_THRESHOLD = -1;
  private static final int M_MMAP_THRESHOLD = -3;

  /** glibc's mallopt (and its version call, only to tell glibc from other C libraries). */
  interface LibC extends Library {
    int mallopt(int param, int value);

    String gnu_get_libc_version();
  }

  private static final int APPLIED = apply();

  private NativeHeap() {}

  /**
   * The mmap threshold in force for this process (bytes), set once on first use of this class; 0
   * when nothing was set (not glibc, or the operator asked for the default).
   */
  public static int mmapThreshold() {
    return APPLIED;
  }

  private static int apply() {
    int threshold = Integer.getInteger("whale.mallocMmapThreshold", DEFAULT_MMAP_THRESHOLD);
    if (threshold < 0) {
      throw new IllegalArgumentException("whale.mallocMmapThreshold must be 0 (glibc's default) or "
          + "a size in bytes, got " + threshold);
    }
    if (threshold == 0 || !Platform.isLinux()) {
      return 0;
    }
    LibC c;
    try {
      c = Native.load("c", LibC.class);
      c.gnu_get_libc_version();
    } catch (UnsatisfiedLinkError e) {
      return 0; // not glibc: its allocator has no dynamic threshold to turn off
    }
    // the trim threshold too: each raise of the mmap threshold had doubled it as well
    if (c.mallopt(M_MMAP_THRESHOLD, threshold) != 1 || c.mallopt(M_TRIM_THRESHOLD, threshold) != 1) {
      throw new IllegalStateException("glibc rejected mallopt(M_MMAP_THRESHOLD/M_TRIM_THRESHOLD, "
          + threshold + "); whale.mallocMmapThreshold must be at most 32 MiB (0: glibc's default)");
    }
    return threshold;
  }
}
