package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import whale.model.SftExample;

/**
 * {@code model.dtype: float16}: the frozen base in half precision under LoRA, on the CPU (each
 * matrix upcast to float32 where it is used, see LlamaDecoder.matmulT) or, with
 * -Dwhale.test.device=cuda, on a GPU (float16 GEMMs).
 */
class Float16BaseTest {
  /** float16's unit roundoff: round-to-nearest with an 11-bit significand, 2^-11. */
  static final double U = Math.scalb(1.0, -11);
  static final HfModel.Placement HALF = HfFixtures.placement("float16");
  @TempDir Path tmp;

  /**
   * Tolerance: each weight rounded to float16 has relative error at most U (round to nearest); to
   * first order a product y = W x then moves by at most U * sum |W_ij x_j|, and errors of matrices
   * in series add. A fixture's last-position logit passes through 16 rounded matrices (the
   * embedding, 7 projections in each of 2 layers, the head), so the bound is 16 U times the logits'
   * scale (the sums of |terms| are of that order here): 16 * 2^-11 * ~6 = ~0.05. Measured: 2.0 U to
   * 5.7 U of the largest logit (llama 0.013), and nothing of float16's rounding for mistral, a BF16
   * checkpoint: an 8-bit significand fits float16's 11 bits, so that base loses nothing. Its
   * logits were bit-identical under MKL's own dispatch; under whale's default pin (MKL's COMPATIBLE
   * branch, CpuPins) the upcast copies go through SGEMM apart from the float32 base's weights and
   * differ by float32 summation noise, 2.4e-7 measured (one float32 ulp of a logit between 2 and 4), three
   * orders of magnitude below one float16 rounding (U * scale, ~3e-3), which is what is checked:
   * at most 1e-6 of the logits' scale. On cuda each product's
   * output is also rounded to float16 (the GEMM runs in half precision), one more U per matrix:
   * the bound doubles there and no model is exact.
   */
  static final double ROUNDED_MATRICES = 16;
  static final double ROUNDINGS_PER_MATRIX = HfFixtures.cuda() ? 2 : 1;

  @ParameterizedTest
  @ValueSource(strings = {"llama", "llama3", "qwen2", "qwen3", "mistral"})
  void logitsStayWithinFloat16RoundingOfFloat32(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    try (NDManager m32 = HfFixtures.manager(); NDManager m16 = HfFixtures.manager()) {
      LlamaDecoder full = LlamaDecoder.load(HfFixtures.dir(model), m32);
      LlamaDecoder half = LlamaDecoder.load(HfFixtures.dir(model), m16, DataType.FLOAT16);
      assertEquals(2 + 7 * full.config().layers(), ROUNDED_MATRICES);
      double worst = 0;
      double scale = 0;
      for (int i = 0; i < g.path("prompts").size(); i++) {
        int[] ids = HfFixtures.ints(g.path("prompts").get(i).path("ids"));
        float[] a = LlamaDecoderParityTest.lastLogits(full, m32, ids);
        float[] b = LlamaDecoderParityTest.lastLogits(half, m16, ids);
        worst = Math.max(worst, HfFixtures.maxAbsDiff(a, b));
        for (float v : a) {
          scale = Math.max(scale, Math.abs(v));
        }
      }
      System.out.printf("%s float16 base: max |logit - float32| = %.3g (%.2f U of max |logit| "
          + "%.3g)%n", model, worst, worst / scale / U, scale);
      assertTrue(worst <= ROUNDINGS_PER_MATRIX * ROUNDED_MATRICES * U * scale, model + ": " + worst);
      if (model.equals("mistral") && !HfFixtures.cuda()) {
        assertTrue(worst <= 1e-6 * scale, "a BF16 checkpoint is exact in float16: only float32 "
            + "summation noise, not float16 rounding (" + worst + ")");
      } else {
        assertTrue(worst > 0, "float32 weights were rounded: the logits must move");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama", "llama3", "qwen2", "qwen3", "mistral"})
  void greedyTokensAreTransformersFloat32Ones(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    try (HfModel m = HfModel.load(HfFixtures.dir(model), List.of(), HALF)) {
      assertEquals(DataType.FLOAT16, m.decoder().baseType());
      HfFixtures.assertGreedyIsGolden(m, g, model);
    }
  }

  @Test
  void theBaseTakesAboutHalfTheMemory() throws Exception {
    try (NDManager m32 = HfFixtures.manager(); NDManager m16 = HfFixtures.manager()) {
      LlamaDecoder full = LlamaDecoder.load(HfFixtures.dir("qwen2"), m32);
      LlamaDecoder half = LlamaDecoder.load(HfFixtures.dir("qwen2"), m16, DataType.FLOAT16);
      long elements = 0;
      for (NDArray w : full.weights().values()) {
        elements += w.size();
        assertEquals(DataType.FLOAT32, w.getDataType());
      }
      assertEquals(4 * elements, full.parameterBytes());
      double ratio = (double) half.parameterBytes() / full.parameterBytes();
      System.out.printf("qwen2 base: float32 %d bytes, float16 %d bytes (%.3f)%n",
          full.parameterBytes(), half.parameterBytes(), ratio);
      // norms and biases stay float32: a few per mille of the parameters
      assertTrue(ratio > 0.5 && ratio < 0.51, "ratio " + ratio);
      for (var e : half.weights().entrySet()) {
        DataType want = e.getValue().getShape().dimension() == 2 ? DataType.FLOAT16 : DataType.FLOAT32;
        assertEquals(want, e.getValue().getDataType(), e.getKey());
      }
    }
  }

  @Test
  void loraTrainsOnAFloat16BaseAndItsCheckpointReloadsAsFloat16() throws Exception {
    List<SftExample> examples = HfCheckpointTest.EXAMPLES;
    Path ck = tmp.resolve("ck");
    float[] before;
    double firstLoss;
    double lastLoss;
    try (HfModel m = HfModel.load(HfFixtures.dir("qwen2"), HfModel.LINE, HALF)) {
      m.trainLora(new HfModel.LoraSpec(4, 8, List.of("q_proj", "v_proj", "down_proj")), 1);
      for (NDArray p : m.trainer().trainable().values()) {
        assertEquals(DataType.FLOAT32, p.getDataType(), "adapters are float32");
      }
      List<SftTrainer.Example> batch = examples.stream().map(m::example).toList();
      firstLoss = m.trainer().loss(batch);
      for (int i = 0; i < 5; i++) {
        m.sft(examples, 3, 1e-2f, i);
      }
      lastLoss = m.trainer().loss(batch);
      System.out.printf("LoRA on a float16 base: loss %.4f -> %.4f after 5 steps%n", firstLoss,
          lastLoss);
      assertTrue(lastLoss < firstLoss - 0.05, firstLoss + " -> " + lastLoss);
      for (String name : m.trainer().trainable().keySet()) {
        assertEquals(DataType.FLOAT32, m.trainer().optimizer().firstMoment(name).getDataType());
        assertEquals(DataType.FLOAT32, m.trainer().optimizer().secondMoment(name).getDataType());
      }
      m.save(ck);
      before = LlamaDecoderParityTest.lastLogits(m.decoder(), m.manager(), m.promptIds("What is 3 + 3?"));
      // merged export: the float16 base widened exactly, plus scale * B A, as float32 weights
      Path merged = tmp.resolve("merged");
      HfExport.exportModel(m.decoder(), m.directory(), merged, true);
      try (HfModel e = HfModel.load(merged, HfModel.LINE)) {
        float[] exported = LlamaDecoderParityTest.lastLogits(e.decoder(), e.manager(),
            e.promptIds("What is 3 + 3?"));
        double diff = HfFixtures.maxAbsDiff(before, exported);
        assertTrue(diff < 1e-4, "merged export differs by " + diff);
      }
    }
    JsonNode meta = new ObjectMapper().readTree(ck.resolve(HfCheckpoint.META).toFile());
    assertEquals("float16", meta.path("dtype").asText());
    assertEquals(HfFixtures.DEVICE, meta.path("device").asText());
    try (HfModel r = HfModel.resume(ck, HfModel.LINE)) {
      assertEquals(HALF, r.placement());
      assertEquals(DataType.FLOAT16, r.decoder().baseType());
      assertEquals(5, r.trainer().optimizerSteps());
      assertArrayEquals(before, LlamaDecoderParityTest.lastLogits(r.decoder(), r.manager(),
          r.promptIds("What is 3 + 3?")));
    }
  }

  @Test
  void fullFineTuningOfAFloat16BaseIsRefused() throws Exception {
    try (HfModel m = HfModel.load(HfFixtures.dir("llama"), HfModel.LINE, HALF)) {
      String msg = assertThrows(IllegalStateException.class, m::trainFull).getMessage();
      assertTrue(msg.contains("float16") && msg.contains("lora") && msg.contains("float32"), msg);
    }
  }

  @Test
  void placementRefusesUnknownValuesByField() {
    String msg = assertThrows(IllegalArgumentException.class,
        () -> HfModel.Placement.of("bfloat16", "cpu")).getMessage();
    assertTrue(msg.startsWith("model.dtype: "), msg);
    msg = assertThrows(IllegalArgumentException.class,
        () -> HfModel.Placement.of("float32", "tpu")).getMessage();
    assertTrue(msg.startsWith("model.device: "), msg);
  }
}
