package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the garbage-collection twin tests share ({@link GcDuringTrainingTest} for the built-in
 * model, {@code whale.model.hf.HfGcDuringTrainingTest} for Hugging Face ones): a child JVM with a
 * small heap, a thread in it that collects garbage every few milliseconds, and the twins' weights
 * as plain floats to compare bit for bit.
 */
public final class GcStorm {
  private GcStorm() {}

  /** Starts a daemon thread that calls {@code System.gc()} every {@code periodMs} milliseconds. */
  public static void start(long periodMs) {
    Thread collector = new Thread(() -> {
      while (true) {
        System.gc();
        try {
          Thread.sleep(periodMs);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "gc-storm");
    collector.setDaemon(true);
    collector.start();
  }

  /** The arrays' values, in iteration order. */
  public static float[][] values(Collection<NDArray> arrays) {
    float[][] out = new float[arrays.size()][];
    int i = 0;
    for (NDArray x : arrays) {
      out[i++] = x.toFloatArray();
    }
    return out;
  }

  /**
   * Runs {@code main} with {@code args} in a child JVM (-Xmx96m, serial collector, this test's
   * class path); asserts that it finished within 5 minutes and exited 0, and returns its output.
   */
  public static String runChild(Class<?> main, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx96m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), main.getSimpleName() + " did not finish");
    assertEquals(0, p.exitValue(), out);
    return out;
  }
}
