package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Garbage collection must not change the Hugging Face decoder's training (as
 * {@code whale.model.GcDuringTrainingTest} for the built-in model). The LoRA scale was a scalar
 * tensor on a Java buffer, made inside a layer's NDScope and closed with it before the backward
 * pass that reads it (see {@link whale.model.Scalars}): before the fix the LoRA twins in
 * {@link HfTwinTraining} parted at step 0, and the SmolLM2 learning test's second step kept 26
 * rollouts instead of 45 under a small young generation.
 */
class HfGcDuringTrainingTest {
  @Test
  void twinModelsStayBitIdenticalUnderAGarbageCollectionStorm() throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx96m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        HfTwinTraining.class.getName(), "8").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "twin training did not finish");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("twins identical after 8 steps in every mode"), out);
  }
}
