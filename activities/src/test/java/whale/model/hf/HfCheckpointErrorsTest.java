package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDManager;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each bad model directory is refused with the file and the field or tensor named. */
class HfCheckpointErrorsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path tmp;

  /** A copy of a fixture model directory to break. */
  private Path copy(String model) throws IOException {
    Path src = HfFixtures.dir(model);
    Path dst = tmp.resolve(model);
    Files.createDirectories(dst);
    try (Stream<Path> files = Files.list(src)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          Files.copy(f, dst.resolve(f.getFileName()));
        }
      }
    }
    return dst;
  }

  private void editConfig(Path dir, Consumer<ObjectNode> edit) throws IOException {
    Path file = dir.resolve("config.json");
    ObjectNode c = (ObjectNode) JSON.readTree(file.toFile());
    edit.accept(c);
    JSON.writeValue(file.toFile(), c);
  }

  /** The message of loading {@code dir}; the cheap check without loading must say the same. */
  private static String loadError(Path dir) {
    String checked = assertThrows(IOException.class, () -> LlamaDecoder.check(dir)).getMessage();
    try (NDManager m = NDManager.newBaseManager()) {
      String loaded = assertThrows(IOException.class, () -> LlamaDecoder.load(dir, m)).getMessage();
      assertEquals(loaded, checked);
      return loaded;
    }
  }

  @Test
  void everyFixturePassesTheCheck() throws IOException {
    for (String model : HfFixtures.MODELS) {
      assertEquals(2, LlamaDecoder.check(HfFixtures.dir(model)).layers(), model);
    }
  }

  @Test
  void missingTokenizer() throws IOException {
    Path dir = copy("qwen3");
    Files.delete(dir.resolve("tokenizer.json"));
    String msg = assertThrows(IOException.class, () -> LlamaDecoder.check(dir)).getMessage();
    assertMentions(msg, dir.toString(), "no tokenizer.json");
  }

  private static void assertMentions(String message, String... parts) {
    for (String p : parts) {
      assertTrue(message.contains(p), "message should mention '" + p + "': " + message);
    }
  }

  @Test
  void missingConfig() throws IOException {
    Path dir = copy("llama");
    Files.delete(dir.resolve("config.json"));
    assertMentions(loadError(dir), dir.toString(), "no config.json");
  }

  @Test
  void unimplementedArchitecture() throws IOException {
    Path dir = copy("llama");
    editConfig(dir, c -> c.putArray("architectures").add("GPT2LMHeadModel"));
    assertMentions(loadError(dir), "config.json", "\"architectures\"", "GPT2LMHeadModel",
        "LlamaForCausalLM");
  }

  @Test
  void unsupportedRopeType() throws IOException {
    Path dir = copy("llama3");
    editConfig(dir, c -> ((ObjectNode) c.get("rope_parameters")).put("rope_type", "yarn"));
    assertMentions(loadError(dir), "config.json", "rope_parameters.rope_type", "yarn", "llama3");
  }

  @Test
  void unsupportedRopeTypeInTransformers4Layout() throws IOException {
    Path dir = copy("llama");
    editConfig(dir, c -> {
      c.remove("rope_parameters");
      c.put("rope_theta", 10000.0);
      c.putObject("rope_scaling").put("type", "dynamic").put("factor", 2.0);
    });
    assertMentions(loadError(dir), "config.json", "rope_scaling.rope_type", "dynamic");
  }

  @Test
  void transformers4LayoutReadsTheSameRope() throws IOException {
    Path dir = copy("llama3");
    HfConfig v5 = HfConfig.read(dir);
    editConfig(dir, c -> {
      ObjectNode p = (ObjectNode) c.remove("rope_parameters");
      c.set("rope_theta", p.remove("rope_theta"));
      c.set("rope_scaling", p);
    });
    HfConfig v4 = HfConfig.read(dir);
    assertEquals(v5.rope(), v4.rope());
    assertEquals("llama3", v4.rope().type());
    assertEquals(500000.0, v4.rope().theta());
  }

  @Test
  void missingLlama3Field() throws IOException {
    Path dir = copy("llama3");
    editConfig(dir, c -> ((ObjectNode) c.get("rope_parameters")).remove("low_freq_factor"));
    assertMentions(loadError(dir), "config.json", "rope_parameters.low_freq_factor", "missing");
  }

  @Test
  void mistralSlidingWindow() throws IOException {
    Path dir = copy("mistral");
    editConfig(dir, c -> c.put("sliding_window", 64));
    assertMentions(loadError(dir), "config.json", "\"sliding_window\"", "64", "sliding-window");
  }

  @Test
  void qwenSlidingWindow() throws IOException {
    Path dir = copy("qwen2");
    editConfig(dir, c -> c.put("use_sliding_window", true));
    assertMentions(loadError(dir), "config.json", "\"use_sliding_window\"");
  }

  @Test
  void badHeadCount() throws IOException {
    Path dir = copy("qwen2");
    editConfig(dir, c -> c.put("num_key_value_heads", 3));
    assertMentions(loadError(dir), "config.json", "\"num_key_value_heads\"", "3", "4");
  }

  @Test
  void missingShard() throws IOException {
    Path dir = copy("mistral");
    Files.delete(dir.resolve("model-00002-of-00002.safetensors"));
    assertMentions(loadError(dir), "model.safetensors.index.json",
        "model-00002-of-00002.safetensors", "does not exist", "tensor ");
  }

  @Test
  void missingTensor() throws IOException {
    Path dir = copy("llama");
    writeSafetensors(dir.resolve("model.safetensors"), "model.embed_tokens.weight", "F32",
        new long[] {384, 64}, new byte[384 * 64 * 4]);
    assertMentions(loadError(dir), "has no tensor", "model.layers.0.input_layernorm.weight");
  }

  @Test
  void wrongShape() throws IOException {
    Path dir = copy("llama");
    editConfig(dir, c -> c.put("intermediate_size", 96));
    assertMentions(loadError(dir), "model.safetensors", "model.layers.0.mlp.gate_proj.weight",
        "[128, 64]", "[96, 64]");
  }

  @Test
  void unsupportedDtype() throws IOException {
    Path file = tmp.resolve("int.safetensors");
    writeSafetensors(file, "x", "I64", new long[] {2}, new byte[16]);
    String msg = assertThrows(IOException.class, () -> Safetensors.openFile(file)).getMessage();
    assertMentions(msg, file.toString(), "tensor x", "I64", "F32, F16 and BF16");
  }

  @Test
  void bytesDisagreeWithShape() throws IOException {
    Path file = tmp.resolve("short.safetensors");
    writeSafetensors(file, "x", "F32", new long[] {3}, new byte[8]);
    String msg = assertThrows(IOException.class, () -> Safetensors.openFile(file)).getMessage();
    assertMentions(msg, file.toString(), "tensor x", "needs 12 bytes");
  }

  @Test
  void truncatedFile() throws IOException {
    Path dir = copy("llama");
    Path file = dir.resolve("model.safetensors");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(ch.size() - 100);
    }
    assertMentions(loadError(dir), file.toString(), "truncated", "tensor ");
  }

  @Test
  void truncatedShard() throws IOException {
    Path dir = copy("mistral");
    Path file = dir.resolve("model-00001-of-00002.safetensors");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(4);
    }
    assertMentions(loadError(dir), file.toString(), "truncated");
  }

  @Test
  void widensF16AndBf16() throws IOException {
    // 1.0, -2.5, 65504 (largest half), 2^-24 (smallest subnormal half), -0.0
    short[] half = {0x3c00, (short) 0xc100, 0x7bff, 0x0001, (short) 0x8000};
    float[] expected = {1f, -2.5f, 65504f, (float) Math.pow(2, -24), -0f};
    Path f16 = tmp.resolve("f16.safetensors");
    writeSafetensors(f16, "h", "F16", new long[] {5}, shorts(half));
    assertArrayEquals(expected, Safetensors.openFile(f16).read("h", new long[] {5}, "test"));
    short[] bf = {0x3f80, (short) 0xc020, 0x4049}; // 1.0, -2.5, 3.140625
    Path b16 = tmp.resolve("bf16.safetensors");
    writeSafetensors(b16, "b", "BF16", new long[] {3}, shorts(bf));
    assertArrayEquals(new float[] {1f, -2.5f, 3.140625f},
        Safetensors.openFile(b16).read("b", new long[] {3}, "test"));
  }

  private static byte[] shorts(short[] values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
    for (short s : values) {
      b.putShort(s);
    }
    return b.array();
  }

  /** A one-tensor safetensors file, written by hand so that it can be wrong on purpose. */
  static void writeSafetensors(Path file, String name, String dtype, long[] shape, byte[] data)
      throws IOException {
    ObjectNode header = JSON.createObjectNode();
    ObjectNode t = header.putObject(name);
    t.put("dtype", dtype);
    var s = t.putArray("shape");
    for (long d : shape) {
      s.add(d);
    }
    t.putArray("data_offsets").add(0).add(data.length);
    byte[] h = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
    ByteBuffer out = ByteBuffer.allocate(8 + h.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(h.length).put(h).put(data);
    Files.write(file, out.array());
  }
}
