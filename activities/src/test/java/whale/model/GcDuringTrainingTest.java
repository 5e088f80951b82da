package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Garbage collection must not change training. DJL's scalar ops ({@code mul(Number)} and friends)
 * free their operand's Java buffer while autograd still holds it for the backward pass; a collection
 * between forward and backward then scaled every gradient wrong (see {@link Scalars}). Before the fix
 * the twins in {@link TwinTraining} parted within the first few steps.
 */
class GcDuringTrainingTest {
  @Test
  void twinModelsStayBitIdenticalUnderAGarbageCollectionStorm() throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx96m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        TwinTraining.class.getName(), "40").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "twin training did not finish");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("twins identical after 40 steps"), out);
  }
}
