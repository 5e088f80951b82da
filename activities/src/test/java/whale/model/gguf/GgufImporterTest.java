package whale.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import whale.chat.ChatTemplate;
import whale.chat.Message;
import whale.model.gguf.GgufFile.ValueType;
import whale.model.hf.HfConfig;
import whale.model.hf.HfModel;
import whale.model.hf.HfTokenizer;
import whale.model.hf.LlamaDecoder;
import whale.model.hf.Safetensors;

/**
 * The import of the tiny Llama GGUF of golden.json: exact weights (q/k rows un-permuted by the
 * permutation llama.cpp's converter applies), logits equal to transformers', tokenizers equal to
 * Hugging Face's, and bad inputs refused with nothing left at --out.
 */
class GgufImporterTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path tmp;

  private Path importTiny(boolean tied, String pre, String dtype) throws IOException {
    Path gguf = GgufFixtures.tinyLlama(tied, pre).write(tmp.resolve("tiny.gguf"));
    Path out = tmp.resolve("out-" + tied + "-" + pre + "-" + dtype);
    GgufImporter.Result r = GgufImporter.importFile(gguf, out, HfModel.Placement.Dtype.of(dtype), false);
    assertEquals(out.toAbsolutePath(), r.out());
    return out;
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void weightsAreExactlyTheHuggingFaceOnesAndLogitsMatchTransformers(boolean tied) throws Exception {
    JsonNode t = GgufFixtures.tiny();
    Path dir = importTiny(tied, "smollm", "float32");
    HfConfig c = HfConfig.read(dir);
    assertEquals(t.path("hidden").asInt(), c.hiddenSize());
    assertEquals(t.path("layers").asInt(), c.layers());
    assertEquals(t.path("heads").asInt(), c.heads());
    assertEquals(t.path("kv_heads").asInt(), c.kvHeads());
    assertEquals(t.path("hidden").asInt() / t.path("heads").asInt(), c.headDim());
    assertEquals(t.path("ffn").asInt(), c.intermediateSize());
    assertEquals(t.path("vocab").asInt(), c.vocabSize());
    assertEquals(t.path("context").asInt(), c.maxPositions());
    assertEquals(1e-5, c.rmsNormEps(), 0.0, "the float32 epsilon written as the decimal it was");
    assertEquals(t.path("rope_theta").asDouble(), c.rope().theta(), 0.0);
    assertEquals(tied, c.tieWordEmbeddings());
    assertEquals(List.of(2), c.eosIds());

    Safetensors st = Safetensors.openDirectory(dir);
    Map<String, long[]> expected = LlamaDecoder.shapes(c);
    assertEquals(expected.keySet(), st.entries().keySet());
    assertEquals(!tied, st.contains("lm_head.weight"));
    for (Map.Entry<String, long[]> e : expected.entrySet()) {
      float[] ours = st.read(e.getKey(), e.getValue(), "test");
      assertEquals("F32", st.entries().get(e.getKey()).dtype());
      assertArrayEquals(GgufFixtures.hfWeight(e.getKey(), ours.length), ours, e.getKey());
    }

    int[] ids = GgufFixtures.ints(t.path("prompt_ids"));
    float[] golden = floats(t.path(tied ? "logits_tied" : "logits_untied"));
    try (NDManager m = NDManager.newBaseManager()) {
      LlamaDecoder d = LlamaDecoder.load(dir, m);
      int[] pos = new int[ids.length];
      for (int i = 0; i < pos.length; i++) {
        pos[i] = i;
      }
      NDArray h = d.hidden(m.create(ids, new Shape(1, ids.length)), m.create(pos, new Shape(1, ids.length)),
          null, null);
      float[] ours = d.logits(h.get(new NDIndex(":, {}", ids.length - 1))).toFloatArray();
      double worst = 0;
      for (int i = 0; i < ours.length; i++) {
        worst = Math.max(worst, Math.abs(ours[i] - golden[i]));
      }
      System.out.printf("tiny %s: max |logit - transformers| = %.3g%n", tied ? "tied" : "untied", worst);
      assertEquals(golden.length, ours.length);
      assertTrue(worst < 1e-4, "max abs logit difference " + worst);
    }
  }

  /** A wrong un-permutation would pass the tests above only if it were the inverse of the golden rows. */
  @Test
  void unpermuteInvertsLlamaCppsPermutation() {
    JsonNode t = GgufFixtures.tiny();
    int[] qRows = GgufFixtures.ints(t.path("q_rows"));
    int cols = 3;
    float[] hf = new float[qRows.length * cols];
    for (int i = 0; i < hf.length; i++) {
      hf[i] = i;
    }
    float[] gguf = GgufFixtures.rows(hf, cols, qRows);
    assertArrayEquals(hf, GgufImporter.unpermute(gguf, t.path("heads").asInt(), cols));
    assertFalse(java.util.Arrays.equals(hf, gguf), "the permutation is not the identity");
  }

  @Test
  void float16WeightsAreRoundedToNearestEven() throws Exception {
    Path dir = importTiny(false, "smollm", "float16");
    Safetensors st = Safetensors.openDirectory(dir);
    try (NDManager m = NDManager.newBaseManager()) {
      for (Map.Entry<String, Safetensors.Entry> e : st.entries().entrySet()) {
        assertEquals("F16", e.getValue().dtype(), e.getKey());
        float[] exact = GgufFixtures.hfWeight(e.getKey(), (int) e.getValue().elements());
        float[] torch = m.create(exact).toType(DataType.FLOAT16, false).toType(DataType.FLOAT32, false)
            .toFloatArray();
        assertArrayEquals(torch, Safetensors.read(e.getValue()), e.getKey() + " as PyTorch rounds");
      }
      assertEquals("float16", JSON.readTree(dir.resolve("config.json").toFile()).path("torch_dtype").asText());
      // the rounding itself, on awkward values: ties, subnormals, overflow, infinities, NaN
      float[] awkward = new float[4096];
      java.util.Random r = new java.util.Random(7);
      for (int i = 0; i < awkward.length; i++) {
        awkward[i] = Float.intBitsToFloat(i < 16 ? new int[] {0, 0x80000000, 0x7f800000, 0xff800000,
            0x477fefff, 0x477ff000, 0x477ff001, 0x33000000, 0x33000001, 0x387fc000, 0x38800000,
            0x3f801000, 0x3f803000, 0x7fc00000, 0x00000001, 0xb3800000}[i]
            : (r.nextInt() & 0x8fffffff) | ((96 + r.nextInt(48)) << 23)); // exponents around half's range
      }
      // (a FLOAT16 array's bytes: DJL's PyTorch engine has no int16 cast)
      java.nio.ShortBuffer torchHalf = java.nio.ByteBuffer.wrap(
          m.create(awkward).toType(DataType.FLOAT16, false).toByteArray())
          .order(java.nio.ByteOrder.nativeOrder()).asShortBuffer();
      for (int i = 0; i < awkward.length; i++) {
        short ours = Safetensors.floatToHalf(awkward[i]);
        if (Float.isNaN(awkward[i])) {
          assertTrue(Float.isNaN(Safetensors.halfToFloat(ours)));
        } else {
          assertEquals(Safetensors.halfToFloat(torchHalf.get(i)), Safetensors.halfToFloat(ours),
              "float " + Integer.toHexString(Float.floatToRawIntBits(awkward[i])));
        }
      }
    }
  }

  /** tokenizer.json rebuilt from the GGUF encodes as Hugging Face's original of each family. */
  @ParameterizedTest
  @ValueSource(strings = {"smollm", "gpt-2", "llama-bpe"})
  void tokenizerEncodesAsTheOriginal(String pre) throws IOException {
    JsonNode enc = GgufFixtures.tiny().path("encodings").path(pre);
    Path dir = importTiny(true, pre, "float32");
    try (HfTokenizer tok = HfTokenizer.load(dir)) {
      for (JsonNode c : enc.path("texts")) {
        String text = c.path("text").asText();
        int[] ids = tok.encode(text);
        assertArrayEquals(GgufFixtures.ints(c.path("ids")), ids, pre + ": " + text);
        String decoded = tok.decode(ids);
        assertEquals(enc.path("add_bos").asBoolean() ? "<|im_start|>" + text : text, decoded);
      }
      assertEquals(List.of(2), tok.eosIds());
      assertEquals(0, tok.padId());
      assertEquals(1, tok.bosId());
    }
    JsonNode tc = JSON.readTree(dir.resolve("tokenizer_config.json").toFile());
    JsonNode tokMeta = GgufFixtures.tiny().path("tokenizer");
    assertEquals("<|im_start|>", tc.path("bos_token").asText());
    assertEquals("<|im_end|>", tc.path("eos_token").asText());
    assertEquals("<|endoftext|>", tc.path("pad_token").asText());
    assertEquals(tokMeta.path("chat_template").asText(), tc.path("chat_template").asText());
    assertEquals(enc.path("add_bos").asBoolean(), tc.path("add_bos_token").asBoolean());
    JsonNode tj = JSON.readTree(dir.resolve("tokenizer.json").toFile());
    int control = 0;
    int user = 0;
    for (JsonNode a : tj.path("added_tokens")) {
      if (a.path("special").asBoolean()) {
        control++;
      } else {
        user++;
        assertEquals("[city]", a.path("content").asText());
      }
    }
    assertEquals(3, control, "token type 3 (control) becomes a special added token");
    assertEquals(1, user, "token type 4 (user-defined) becomes a plain added token");
    // whale's chat template reader finds it
    assertEquals("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        ChatTemplate.of(dir).prompt(List.of(Message.user("hi")), List.of()));
  }

  // ---------------------------------------------------------------- bad inputs

  @Test
  void wrongArchitecture() throws IOException {
    assertRefused(GgufFixtures.tinyLlama(true, "smollm")
        .kv("general.architecture", ValueType.STRING, "gemma3"),
        "metadata general.architecture is \"gemma3\"; whale imports the llama architecture only");
  }

  @Test
  void truncatedFile() throws IOException {
    byte[] good = GgufFixtures.tinyLlama(true, "smollm").bytes();
    Path file = tmp.resolve("cut.gguf");
    Files.write(file, java.util.Arrays.copyOf(good, good.length * 2 / 3));
    assertRefused(file, "truncated: tensor blk.");
    Files.write(file, java.util.Arrays.copyOf(good, 1000)); // inside the token list
    assertRefused(file, "truncated or corrupt: metadata tokenizer.ggml.tokens has 421 elements");
    Files.write(file, java.util.Arrays.copyOf(good, 200));
    assertRefused(file, "truncated: the header ends inside metadata");
  }

  @Test
  void unsupportedQuantType() throws IOException {
    int d = GgufFixtures.tiny().path("hidden").asInt();
    int ffn = GgufFixtures.tiny().path("ffn").asInt();
    GgufFixtures.Writer w = GgufFixtures.tinyLlama(true, "smollm")
        .tensor("blk.1.ffn_up.weight", new long[] {d, ffn}, GgmlType.IQ4_NL.id, new byte[d / 32 * 18 * ffn]);
    assertRefused(w, "tensor blk.1.ffn_up.weight has type IQ4_NL, which whale cannot dequantize");
  }

  @Test
  void missingTokenizerKeys() throws IOException {
    for (String key : List.of("tokenizer.ggml.merges", "tokenizer.ggml.tokens",
        "tokenizer.ggml.token_type", "tokenizer.ggml.pre", "tokenizer.ggml.model")) {
      assertRefused(GgufFixtures.tinyLlama(true, "smollm").remove(key),
          "metadata key " + key + " is missing");
    }
    assertRefused(GgufFixtures.tinyLlama(true, "smollm").remove("llama.block_count"),
        "metadata key llama.block_count is missing");
  }

  @Test
  void tokenizersWhoseHuggingFaceFormIsUnknown() throws IOException {
    assertRefused(GgufFixtures.tinyLlama(true, "qwen2"),
        "metadata tokenizer.ggml.pre is \"qwen2\"; whale knows the Hugging Face form of");
    assertRefused(GgufFixtures.tinyLlama(true, "smollm")
        .kv("tokenizer.ggml.model", ValueType.STRING, "llama"),
        "tokenizer.ggml.model is \"llama\" (SentencePiece)");
  }

  @Test
  void unexpectedOrMisshapenTensors() throws IOException {
    assertRefused(GgufFixtures.tinyLlama(true, "smollm")
        .tensor("rope_freqs.weight", new long[] {8}, GgmlType.F32.id, new byte[32]),
        "tensor rope_freqs.weight has no place in a 2-layer Llama");
    GgufFixtures.Writer w = GgufFixtures.tinyLlama(true, "smollm");
    w.tensors.remove("blk.1.attn_v.weight");
    assertRefused(w, "tensor blk.1.attn_v.weight is missing");
  }

  @Test
  void existingOutNeedsForce() throws IOException {
    Path gguf = GgufFixtures.tinyLlama(true, "smollm").write(tmp.resolve("tiny.gguf"));
    Path out = Files.createDirectories(tmp.resolve("out"));
    Files.writeString(out.resolve("mine.txt"), "keep me");
    String msg = assertThrows(IOException.class,
        () -> GgufImporter.importFile(gguf, out, HfModel.Placement.Dtype.FLOAT32, false)).getMessage();
    assertTrue(msg.contains("already exists (pass --force to replace it)"), msg);
    assertEquals("keep me", Files.readString(out.resolve("mine.txt")));

    GgufImporter.importFile(gguf, out, HfModel.Placement.Dtype.FLOAT32, true);
    assertFalse(Files.exists(out.resolve("mine.txt")), "--force replaces the directory");
    try (Stream<Path> s = Files.list(out)) {
      assertEquals(List.of("config.json", "generation_config.json", "model.safetensors",
          "tokenizer.json", "tokenizer_config.json"), s.map(p -> p.getFileName().toString()).sorted().toList());
    }
    assertEquals(List.of("out", "tiny.gguf"), listing(), "no temporary directory left beside it");
  }

  private void assertRefused(GgufFixtures.Writer w, String expected) throws IOException {
    assertRefused(w.write(tmp.resolve("bad.gguf")), expected);
  }

  /** The import fails with {@code expected} in its message, and nothing is left beside the GGUF. */
  private void assertRefused(Path gguf, String expected) throws IOException {
    Path out = tmp.resolve("out");
    String msg = assertThrows(IOException.class,
        () -> GgufImporter.importFile(gguf, out, HfModel.Placement.Dtype.FLOAT32, false)).getMessage();
    assertTrue(msg.contains(expected), "expected \"" + expected + "\" in: " + msg);
    assertFalse(Files.exists(out), "nothing at --out");
    assertEquals(List.of(gguf.getFileName().toString()), listing(), "no temporary directory left");
  }

  private List<String> listing() throws IOException {
    try (Stream<Path> s = Files.list(tmp)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static float[] floats(JsonNode a) {
    float[] out = new float[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = (float) a.get(i).asDouble();
    }
    return out;
  }
}
