package whale.model;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds what glibc's malloc keeps of the native memory libtorch frees. glibc serves an allocation
 * of 128 KiB or more with a mapping of its own, returned to the system on free, but every such free
 * raises that threshold to the freed size (up to 32 MiB), so after the first sampling batches every
 * tensor comes from the malloc heaps ("arenas"), which keep freed space and fragment across
 * threads. {@code whale compare examples/math-compare.json} grew that way past 11 GB resident while
 * its Java heap stayed under 250 MB (a malloc_trim of a smaller compare gave back half of its
 * 2.6 GB at once).
 *
 * <p>So every activity attempt ends with {@link #trim} (see {@code ActivityHeartbeat.during}): what
 * one RSFT step or evaluation freed goes back to the system before the next starts, at the cost of
 * page faults when the next reuses it. {@code -Dwhale.mallocMmapThreshold=BYTES} (at most 32 MiB)
 * also fixes the threshold, so large tensors go back as soon as they are closed: a lower peak, but
 * a mapping and its page faults per tensor (sampling and SFT ran 1.5-2x slower at 131072). 0, the
 * default, keeps glibc's dynamic threshold. Nothing changes off Linux or without glibc.
 */
public final class NativeHeap {
  // mallopt parameters, from glibc's malloc.h
  private static final int M_TRIM_THRESHOLD = -1;
  private static final int M_MMAP_THRESHOLD = -3;

  /** The glibc calls used (and its version call, only to tell glibc from other C libraries). */
  interface LibC extends Library {
    int mallopt(int param, int value);

    int malloc_trim(long pad);

    String gnu_get_libc_version();
  }

  private static final LibC GLIBC = load();
  private static final int THRESHOLD = fixThreshold();
  private static final AtomicLong TRIMS = new AtomicLong();

  private NativeHeap() {}

  /** The fixed mmap threshold of this process (bytes), 0 when glibc's dynamic one is in force. */
  public static int mmapThreshold() {
    return THRESHOLD;
  }

  /**
   * Gives the free pages of every malloc heap back to the system (glibc's malloc_trim); a no-op
   * without glibc. Milliseconds next to an activity's seconds.
   */
  public static void trim() {
    if (GLIBC != null) {
      GLIBC.malloc_trim(0);
      TRIMS.incrementAndGet();
    }
  }

  /** How many times {@link #trim} gave memory back in this process (0 without glibc). */
  public static long trims() {
    return TRIMS.get();
  }

  /** Whether this process runs on glibc (what {@link #trim} and the threshold act on). */
  public static boolean glibc() {
    return GLIBC != null;
  }

  private static LibC load() {
    if (!Platform.isLinux()) {
      return null;
    }
    try {
      LibC c = Native.load("c", LibC.class);
      c.gnu_get_libc_version();
      return c;
    } catch (UnsatisfiedLinkError e) {
      return null; // not glibc (musl has neither a dynamic threshold nor malloc_trim)
    }
  }

  private static int fixThreshold() {
    int threshold = Integer.getInteger("whale.mallocMmapThreshold", 0);
    if (threshold < 0) {
      throw new IllegalArgumentException("whale.mallocMmapThreshold must be 0 (glibc's dynamic "
          + "threshold) or a size in bytes, got " + threshold);
    }
    if (threshold == 0 || GLIBC == null) {
      return 0;
    }
    // the trim threshold too: each raise of the mmap threshold had doubled it as well
    if (GLIBC.mallopt(M_MMAP_THRESHOLD, threshold) != 1
        || GLIBC.mallopt(M_TRIM_THRESHOLD, threshold) != 1) {
      throw new IllegalStateException("glibc rejected mallopt(M_MMAP_THRESHOLD/M_TRIM_THRESHOLD, "
          + threshold + "); whale.mallocMmapThreshold must be at most 32 MiB (0: glibc's default)");
    }
    return threshold;
  }
}
