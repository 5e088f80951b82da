package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Structure;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code whale.mallocMmapThreshold} against glibc itself, in child JVMs (the threshold is
 * process-wide and cannot be unset): after a 16 MiB block is freed, glibc's dynamic threshold serves
 * 256 KiB blocks from its heaps; with the threshold fixed each gets a mapping of its own.
 */
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

  @Test
  void aFixedThresholdKeepsLargeBlocksMappedAfterALargerOneIsFreed() throws Exception {
    assumeTrue(NativeHeap.glibc(), "glibc only");
    assertEquals("threshold 131072: 16 of 16 blocks mapped", child(131072));
    assertEquals("threshold 0: 0 of 16 blocks mapped", child(0));
  }

  @Test
  void aNegativeThresholdIsRejectedByName() throws Exception {
    String out = child(-5);
    assertTrue(out.contains("whale.mallocMmapThreshold must be 0 (glibc's dynamic threshold) or a "
        + "size in bytes, got -5"), out);
  }

  private static String child(int threshold) throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Dwhale.mallocMmapThreshold=" + threshold, "-cp", System.getProperty("java.class.path"),
        NativeHeapTest.class.getName()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertTrue(p.waitFor(1, TimeUnit.MINUTES), "child did not finish");
    return out;
  }

  /** The child: counts how many of 16 blocks of 256 KiB glibc maps after a 16 MiB free. */
  public static void main(String[] args) {
    int threshold;
    try {
      threshold = NativeHeap.mmapThreshold();
    } catch (ExceptionInInitializerError e) {
      System.out.println(e.getCause().getMessage());
      return;
    }
    GlibcInfo c = Native.load("c", GlibcInfo.class);
    Native.free(Native.malloc(16 << 20)); // raises a dynamic threshold to 16 MiB
    int n = 16;
    long mapped = -1;
    // other JVM threads allocate too: the count is exact in at least one of a few tries
    for (int attempt = 0; attempt < 5 && mapped != n; attempt++) {
      long before = c.mallinfo2().hblks;
      long[] blocks = new long[n];
      for (int i = 0; i < n; i++) {
        blocks[i] = Native.malloc(256 << 10);
      }
      mapped = c.mallinfo2().hblks - before;
      for (long b : blocks) {
        Native.free(b);
      }
    }
    System.out.println("threshold " + threshold + ": " + mapped + " of " + n + " blocks mapped");
  }
}
