package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Structure;
import org.junit.jupiter.api.Test;

class NativeHeapTest {
  /** glibc's mallinfo2 (2.33+): what the allocator holds, in size_t fields. */
  @Structure.FieldOrder({"arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
      "uordblks", "fordblks", "keepcost"})
  public static class MallInfo extends Structure implements Structure.ByValue {
    public long arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
  }

  interface GlibcInfo extends Library {
    MallInfo mallinfo2();
  }

  /**
   * After a 16 MiB block is freed, glibc's dynamic threshold would serve 256 KiB blocks from its
   * heaps (kept after free); with the threshold fixed each gets its own mapping, unmapped on free.
   */
  @Test
  void largeBlocksStayMappedAfterALargerOneIsFreed() {
    assumeTrue(Platform.isLinux(), "glibc's allocator only");
    GlibcInfo c;
    try {
      c = Native.load("c", GlibcInfo.class);
      c.mallinfo2();
    } catch (UnsatisfiedLinkError e) {
      assumeTrue(false, "no glibc 2.33+ mallinfo2 here");
      return;
    }
    assertEquals(NativeHeap.DEFAULT_MMAP_THRESHOLD, NativeHeap.mmapThreshold());
    Native.free(Native.malloc(16 << 20)); // what used to raise the threshold to 16 MiB
    int n = 16;
    long block = 256 << 10;
    long mapped = -1;
    // other JVM threads allocate too: the count is exact in at least one of a few tries
    for (int attempt = 0; attempt < 5 && mapped != n; attempt++) {
      long before = c.mallinfo2().hblks;
      long[] blocks = new long[n];
      for (int i = 0; i < n; i++) {
        blocks[i] = Native.malloc(block);
      }
      mapped = c.mallinfo2().hblks - before;
      for (long b : blocks) {
        Native.free(b);
      }
    }
    assertEquals(n, mapped, "256 KiB blocks each in their own mapping (returned on free)");
  }
}
