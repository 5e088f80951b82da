package whale.model.hf;

import ai.djl.Device;
import ai.djl.ndarray.NDManager;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;

/**
 * The tiny Hugging Face checkpoints and transformers' golden outputs under test resources hf/.
 * Regenerate them with activities/src/test/python/make_hf_fixtures.py (its header says how).
 */
final class HfFixtures {
  static final List<String> MODELS = List.of("llama", "llama3", "qwen2", "qwen3", "mistral");
  /**
   * Where the parity tests run: cpu, or cuda with {@code -Dwhale.test.device=cuda} (or env
   * WHALE_TEST_DEVICE=cuda), which bench/gpu-check sets on a GPU machine.
   */
  static final String DEVICE = System.getProperty("whale.test.device",
      System.getenv().getOrDefault("WHALE_TEST_DEVICE", "cpu"));
  private static JsonNode golden;

  private HfFixtures() {}

  static boolean cuda() {
    return HfModel.Placement.of("float32", DEVICE).device() == HfModel.Placement.Device.CUDA;
  }

  /** A manager on the test device; on cuda, a process that cannot use a GPU fails saying why. */
  static NDManager manager() {
    if (cuda()) {
      CudaCheck.require();
      return NDManager.newBaseManager(Device.gpu());
    }
    return NDManager.newBaseManager();
  }

  /** {@code dtype} on the test device. */
  static HfModel.Placement placement(String dtype) {
    return HfModel.Placement.of(dtype, DEVICE);
  }

  static Path root() {
    try {
      return Path.of(HfFixtures.class.getResource("/hf/golden.json").toURI()).getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static Path dir(String model) {
    return root().resolve(model);
  }

  static synchronized JsonNode golden(String model) {
    if (golden == null) {
      try {
        golden = new ObjectMapper().readTree(root().resolve("golden.json").toFile());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return golden.path("models").path(model);
  }

  /** {@code m}'s greedy continuations of the golden prompts (12 new tokens, one batch) are transformers'. */
  static void assertGreedyIsGolden(HfModel m, JsonNode golden, String model) {
    List<KvSampler.Row> rows = new java.util.ArrayList<>();
    for (JsonNode p : golden.path("prompts")) {
      rows.add(new KvSampler.Row(ints(p.path("ids")), 0, 12));
    }
    int[][] ours = m.generateIds(rows, Sampling.GREEDY);
    for (int i = 0; i < rows.size(); i++) {
      org.junit.jupiter.api.Assertions.assertArrayEquals(ints(golden.path("greedy").get(i)), ours[i],
          model + " prompt " + i);
    }
  }

  static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }

  static float[] floats(JsonNode array) {
    float[] out = new float[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = (float) array.get(i).asDouble();
    }
    return out;
  }

  static double maxAbsDiff(float[] a, float[] b) {
    if (a.length != b.length) {
      throw new AssertionError("lengths " + a.length + " vs " + b.length);
    }
    double max = 0;
    for (int i = 0; i < a.length; i++) {
      max = Math.max(max, Math.abs(a[i] - b[i]));
    }
    return max;
  }
}
