package whale.model.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import whale.model.gguf.GgufFile.ValueType;

/**
 * The golden numbers of src/test/resources/gguf/golden.json (made by
 * src/test/python/make_gguf_fixtures.py, whose header says what each is) and a small GGUF writer,
 * so the tests build their GGUF files themselves: no weights are committed.
 */
final class GgufFixtures {
  private static JsonNode golden;

  private GgufFixtures() {}

  static synchronized JsonNode golden() {
    if (golden == null) {
      try (var in = GgufFixtures.class.getResourceAsStream("/gguf/golden.json")) {
        golden = new ObjectMapper().readTree(in);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return golden;
  }

  static JsonNode tiny() {
    return golden().path("tiny");
  }

  static byte[] base64(JsonNode n) {
    return Base64.getDecoder().decode(n.asText());
  }

  static float[] floats(byte[] littleEndian) {
    float[] out = new float[littleEndian.length / 4];
    ByteBuffer.wrap(littleEndian).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
    return out;
  }

  static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }

  /**
   * The script's weight(name, n, scale): a 32-bit hash of (index + crc32(name)), its top 16 bits
   * mapped to [-1, 1) and times {@code scale} (a power of two: exact in float32).
   */
  static float[] weight(String name, int n, float scale) {
    CRC32 crc = new CRC32();
    crc.update(name.getBytes(StandardCharsets.UTF_8));
    long seed = crc.getValue();
    float[] out = new float[n];
    for (int i = 0; i < n; i++) {
      int h = (int) ((i + seed) * 0x9E3779B1L);
      h ^= h >>> 15;
      h *= 0x85EBCA77;
      h ^= h >>> 13;
      int u = (h >>> 16) - 32768;
      out[i] = u / 32768f * scale;
    }
    return out;
  }

  /** A tiny-model tensor by its Hugging Face name, as the script made it. */
  static float[] hfWeight(String name, int n) {
    if (name.endsWith("norm.weight")) {
      float[] w = weight(name, n, 0.25f);
      for (int i = 0; i < n; i++) {
        w[i] += 1f;
      }
      return w;
    }
    return weight(name, n, name.contains("embed") || name.contains("lm_head") ? 0.5f : 0.125f);
  }

  /** Rows of {@code w} ([rows, cols]) reordered: row i of the result is row {@code from[i]}. */
  static float[] rows(float[] w, int cols, int[] from) {
    float[] out = new float[w.length];
    for (int i = 0; i < from.length; i++) {
      System.arraycopy(w, from[i] * cols, out, i * cols, cols);
    }
    return out;
  }

  /**
   * The tiny Llama of golden.json as a GGUF as llama.cpp's converter writes one: tensors in its
   * names, q/k rows permuted with the golden permutation, tokenizer keys, {@code pre} as
   * pre-tokenizer; no output.weight when {@code tied}.
   */
  static Writer tinyLlama(boolean tied, String pre) {
    JsonNode t = tiny();
    int d = t.path("hidden").asInt();
    int layers = t.path("layers").asInt();
    int heads = t.path("heads").asInt();
    int kv = t.path("kv_heads").asInt();
    int ffn = t.path("ffn").asInt();
    int vocab = t.path("vocab").asInt();
    int hd = d / heads;
    JsonNode tok = t.path("tokenizer");
    Writer w = new Writer()
        .kv("general.architecture", ValueType.STRING, "llama")
        .kv("general.name", ValueType.STRING, "tiny")
        .kv("llama.block_count", ValueType.UINT32, layers)
        .kv("llama.context_length", ValueType.UINT32, t.path("context").asInt())
        .kv("llama.embedding_length", ValueType.UINT32, d)
        .kv("llama.feed_forward_length", ValueType.UINT32, ffn)
        .kv("llama.attention.head_count", ValueType.UINT32, heads)
        .kv("llama.attention.head_count_kv", ValueType.UINT32, kv)
        .kv("llama.rope.freq_base", ValueType.FLOAT32, (float) t.path("rope_theta").asDouble())
        .kv("llama.attention.layer_norm_rms_epsilon", ValueType.FLOAT32, (float) t.path("eps").asDouble())
        .kv("llama.vocab_size", ValueType.UINT32, vocab)
        .kv("llama.rope.dimension_count", ValueType.UINT32, hd)
        .kv("general.file_type", ValueType.UINT32, 0)
        .kv("tokenizer.ggml.model", ValueType.STRING, tok.path("model").asText())
        .kv("tokenizer.ggml.pre", ValueType.STRING, pre)
        .kv("tokenizer.ggml.tokens", ValueType.ARRAY, array(ValueType.STRING, tok.path("tokens")))
        .kv("tokenizer.ggml.token_type", ValueType.ARRAY, array(ValueType.INT32, tok.path("token_type")))
        .kv("tokenizer.ggml.merges", ValueType.ARRAY, array(ValueType.STRING, tok.path("merges")))
        .kv("tokenizer.ggml.bos_token_id", ValueType.UINT32, tok.path("bos").asInt())
        .kv("tokenizer.ggml.eos_token_id", ValueType.UINT32, tok.path("eos").asInt())
        .kv("tokenizer.ggml.unknown_token_id", ValueType.UINT32, tok.path("unk").asInt())
        .kv("tokenizer.ggml.padding_token_id", ValueType.UINT32, tok.path("pad").asInt())
        .kv("tokenizer.ggml.add_bos_token", ValueType.BOOL,
            t.path("encodings").path(pre).path("add_bos").asBoolean(false))
        .kv("tokenizer.chat_template", ValueType.STRING, tok.path("chat_template").asText());
    w.f32("token_embd.weight", "model.embed_tokens.weight", d, vocab, null);
    for (int i = 0; i < layers; i++) {
      String b = "blk." + i + ".";
      String p = "model.layers." + i + ".";
      w.f32(b + "attn_norm.weight", p + "input_layernorm.weight", d, 1, null);
      w.f32(b + "ffn_down.weight", p + "mlp.down_proj.weight", ffn, d, null);
      w.f32(b + "ffn_gate.weight", p + "mlp.gate_proj.weight", d, ffn, null);
      w.f32(b + "ffn_up.weight", p + "mlp.up_proj.weight", d, ffn, null);
      w.f32(b + "ffn_norm.weight", p + "post_attention_layernorm.weight", d, 1, null);
      w.f32(b + "attn_k.weight", p + "self_attn.k_proj.weight", d, kv * hd, ints(t.path("k_rows")));
      w.f32(b + "attn_output.weight", p + "self_attn.o_proj.weight", d, d, null);
      w.f32(b + "attn_q.weight", p + "self_attn.q_proj.weight", d, d, ints(t.path("q_rows")));
      w.f32(b + "attn_v.weight", p + "self_attn.v_proj.weight", d, kv * hd, null);
    }
    w.f32("output_norm.weight", "model.norm.weight", d, 1, null);
    if (!tied) {
      w.f32("output.weight", "lm_head.weight", d, vocab, null);
    }
    return w;
  }

  static Arr array(ValueType type, JsonNode items) {
    List<Object> list = new ArrayList<>();
    for (JsonNode n : items) {
      list.add(type == ValueType.STRING ? n.asText() : (Object) n.asLong());
    }
    return new Arr(type, list);
  }

  /** An array value: its element type and elements. */
  record Arr(ValueType type, List<?> items) {}

  /** Writes GGUF files: metadata in insertion order, tensors laid out at the alignment. */
  static final class Writer {
    int version = 3;
    int alignment = GgufFile.DEFAULT_ALIGNMENT;
    final Map<String, Object[]> kv = new LinkedHashMap<>();
    final Map<String, Object[]> tensors = new LinkedHashMap<>(); // name -> {ne, typeId, bytes}

    Writer kv(String key, ValueType type, Object value) {
      kv.put(key, new Object[] {type, value});
      return this;
    }

    Writer remove(String key) {
      kv.remove(key);
      return this;
    }

    Writer tensor(String name, long[] ne, int typeId, byte[] data) {
      tensors.put(name, new Object[] {ne, typeId, data});
      return this;
    }

    /**
     * An F32 tensor with ne=[cols, rows] holding the tiny model's {@code hfName} values, its rows
     * reordered by {@code rowsFrom} when given.
     */
    void f32(String name, String hfName, int cols, int rows, int[] rowsFrom) {
      float[] v = hfWeight(hfName, cols * rows);
      if (rowsFrom != null) {
        v = rows(v, cols, rowsFrom);
      }
      tensor(name, rows == 1 ? new long[] {cols} : new long[] {cols, rows}, GgmlType.F32.id, f32(v));
    }

    static byte[] f32(float[] v) {
      ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
      b.asFloatBuffer().put(v);
      return b.array();
    }

    byte[] bytes() {
      Out o = new Out();
      o.u32(GgufFile.MAGIC);
      o.u32(version);
      o.u64(tensors.size());
      o.u64(kv.size());
      for (Map.Entry<String, Object[]> e : kv.entrySet()) {
        o.string(e.getKey());
        ValueType type = (ValueType) e.getValue()[0];
        o.u32(type.ordinal());
        o.value(type, e.getValue()[1]);
      }
      long offset = 0;
      for (Map.Entry<String, Object[]> e : tensors.entrySet()) {
        long[] ne = (long[]) e.getValue()[0];
        o.string(e.getKey());
        o.u32(ne.length);
        for (long d : ne) {
          o.u64(d);
        }
        o.u32((Integer) e.getValue()[1]);
        o.u64(offset);
        offset += pad(((byte[]) e.getValue()[2]).length);
      }
      while (o.size() % alignment != 0) {
        o.write(0);
      }
      for (Object[] t : tensors.values()) {
        byte[] data = (byte[]) t[2];
        o.write(data, 0, data.length);
        for (long i = data.length; i < pad(data.length); i++) {
          o.write(0);
        }
      }
      return o.toByteArray();
    }

    private long pad(long n) {
      return (n + alignment - 1) / alignment * alignment;
    }

    Path write(Path file) throws IOException {
      Files.write(file, bytes());
      return file;
    }
  }

  /** Little-endian GGUF encoding of values. */
  private static final class Out extends ByteArrayOutputStream {
    void u32(long v) {
      for (int i = 0; i < 4; i++) {
        write((int) (v >>> (8 * i)));
      }
    }

    void u64(long v) {
      for (int i = 0; i < 8; i++) {
        write((int) (v >>> (8 * i)));
      }
    }

    void string(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      u64(b.length);
      write(b, 0, b.length);
    }

    void value(ValueType type, Object v) {
      switch (type) {
        case UINT8: case INT8: case BOOL:
          write(v instanceof Boolean bool ? (bool ? 1 : 0) : ((Number) v).intValue());
          break;
        case UINT16: case INT16:
          write(((Number) v).intValue());
          write(((Number) v).intValue() >>> 8);
          break;
        case UINT32: case INT32:
          u32(((Number) v).longValue());
          break;
        case UINT64: case INT64:
          u64(((Number) v).longValue());
          break;
        case FLOAT32:
          u32(Float.floatToRawIntBits(((Number) v).floatValue()));
          break;
        case FLOAT64:
          u64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
          break;
        case STRING:
          string((String) v);
          break;
        default: {
          Arr a = (Arr) v;
          u32(a.type().ordinal());
          u64(a.items().size());
          for (Object item : a.items()) {
            value(a.type(), item);
          }
        }
      }
    }
  }
}
