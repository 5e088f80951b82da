package whale.model.gguf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import whale.model.hf.HfConfig;
import whale.model.hf.HfModel;
import whale.model.hf.LlamaDecoder;
import whale.model.hf.Safetensors;

/**
 * Turns a llama.cpp GGUF of a Llama-architecture model into a Hugging Face model directory that
 * transformers and whale load: config.json, model.safetensors, generation_config.json,
 * tokenizer.json and tokenizer_config.json.
 *
 * <p>Everything is checked before a byte is written (architecture, hyperparameters, every tensor's
 * name, shape and type, the tokenizer keys); the directory is then written beside {@code out}
 * under a temporary name and renamed into place, so {@code out} never holds half an import.
 */
public final class GgufImporter {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ARCH = "general.architecture";

  /** What an import wrote. */
  public record Result(Path out, int tensors, long parameters, double seconds, HfConfig config) {}

  private GgufImporter() {}

  /**
   * Imports {@code gguf} into the directory {@code out}, weights as {@code dtype} (float32 or
   * float16); an existing {@code out} is an error unless {@code force}, which replaces it.
   */
  public static Result importFile(Path gguf, Path out, HfModel.Placement.Dtype dtype, boolean force)
      throws IOException {
    long start = System.nanoTime();
    String stDtype = switch (dtype) {
      case FLOAT32 -> "F32";
      case FLOAT16 -> "F16";
    };
    out = out.toAbsolutePath().normalize();
    if (Files.exists(out) && !force) {
      throw new IOException(out + " already exists (pass --force to replace it)");
    }
    try (GgufFile f = GgufFile.open(gguf)) {
      String arch = f.string(ARCH);
      if (!arch.equals("llama")) {
        throw new IOException(gguf + ": metadata " + ARCH + " is \"" + arch
            + "\"; whale imports the llama architecture only");
      }
      HfConfig config = config(f);
      Map<String, String> sources = tensorMap(f, config); // HF name -> GGUF name
      GgufTokenizer tokenizer = GgufTokenizer.read(f, config.vocabSize());

      Path parent = out.getParent();
      Files.createDirectories(parent);
      // a hidden sibling, so the final rename stays on one file system; created with the umask's
      // permissions (createTempDirectory would make it owner-only, and so the imported model)
      Path tmp = parent.resolve("." + out.getFileName() + ".import-" + ProcessHandle.current().pid()
          + "-" + Long.toHexString(System.nanoTime()));
      Files.createDirectory(tmp);
      try {
        LinkedHashMap<String, long[]> shapes = LlamaDecoder.shapes(config);
        Safetensors.write(tmp.resolve(Safetensors.SINGLE), shapes, stDtype,
            name -> values(f, f.tensor(sources.get(name)), config));
        write(tmp.resolve(HfConfig.FILE), configJson(config, tokenizer, dtype.spelling()));
        write(tmp.resolve("generation_config.json"), tokenizer.generationConfig());
        write(tmp.resolve("tokenizer.json"), tokenizer.tokenizerJson());
        write(tmp.resolve("tokenizer_config.json"), tokenizer.tokenizerConfig(config.maxPositions()));
        LlamaDecoder.check(tmp); // whale's own loader accepts it: names, shapes, config
        moveIntoPlace(tmp, out);
      } catch (IOException | RuntimeException e) {
        deleteTree(tmp);
        throw e;
      }
      long parameters = 0;
      for (long[] s : LlamaDecoder.shapes(config).values()) {
        long n = 1;
        for (long d : s) {
          n *= d;
        }
        parameters += n;
      }
      return new Result(out, sources.size(), parameters, (System.nanoTime() - start) / 1e9, config);
    }
  }

  /** The hyperparameters of the {@code llama.*} keys, checked against what whale's decoder runs. */
  static HfConfig config(GgufFile f) throws IOException {
    int hidden = positive(f, "llama.embedding_length");
    int layers = positive(f, "llama.block_count");
    int ffn = positive(f, "llama.feed_forward_length");
    int heads = positive(f, "llama.attention.head_count");
    int kvHeads = f.has("llama.attention.head_count_kv")
        ? positive(f, "llama.attention.head_count_kv") : heads;
    int context = positive(f, "llama.context_length");
    double eps = f.number("llama.attention.layer_norm_rms_epsilon");
    double theta = f.number("llama.rope.freq_base", 10000.0);
    if (heads % kvHeads != 0) {
      throw bad(f, "llama.attention.head_count_kv", kvHeads + " does not divide head_count " + heads);
    }
    int headDim = f.has("llama.attention.key_length") ? positive(f, "llama.attention.key_length")
        : hidden / heads;
    if (!f.has("llama.attention.key_length") && hidden % heads != 0) {
      throw bad(f, "llama.attention.head_count", heads + " does not divide embedding_length " + hidden);
    }
    if (f.has("llama.attention.value_length") && f.integer("llama.attention.value_length") != headDim) {
      throw bad(f, "llama.attention.value_length", "differs from the key length " + headDim);
    }
    if (f.has("llama.rope.dimension_count") && f.integer("llama.rope.dimension_count") != headDim) {
      throw bad(f, "llama.rope.dimension_count", f.integer("llama.rope.dimension_count")
          + ": rotary over part of a head (head size " + headDim + ") is not supported");
    }
    if (f.has("llama.rope.scaling.type") && !f.string("llama.rope.scaling.type").equals("none")) {
      throw bad(f, "llama.rope.scaling.type", "\"" + f.string("llama.rope.scaling.type")
          + "\": scaled RoPE is not supported");
    }
    if (f.has("llama.expert_count") && f.integer("llama.expert_count") > 0) {
      throw bad(f, "llama.expert_count", "mixture-of-experts models are not supported");
    }
    GgufFile.Tensor embd = f.tensor("token_embd.weight");
    if (embd == null || embd.ne().length != 2) {
      throw new IOException(f.path() + ": no two-dimensional tensor token_embd.weight");
    }
    long vocab = embd.ne()[1];
    if (f.has("llama.vocab_size") && f.integer("llama.vocab_size") != vocab) {
      throw bad(f, "llama.vocab_size", f.integer("llama.vocab_size")
          + " differs from the rows of token_embd.weight, " + vocab);
    }
    return new HfConfig("LlamaForCausalLM", hidden, ffn, layers, heads, kvHeads, headDim,
        Math.toIntExact(vocab), eps, context, f.tensor("output.weight") == null, false, false, false,
        false, new HfConfig.Rope("default", theta, 1, 1, 1, 0), List.of(), -1);
  }

  private static int positive(GgufFile f, String key) throws IOException {
    long v = f.integer(key);
    if (v <= 0 || v > Integer.MAX_VALUE) {
      throw bad(f, key, v + " is not a positive int");
    }
    return (int) v;
  }

  private static IOException bad(GgufFile f, String key, String why) {
    return new IOException(f.path() + ": metadata " + key + ": " + why);
  }

  /**
   * HF tensor name to GGUF tensor name, for every tensor whale's decoder needs; each GGUF tensor
   * must have the HF shape (ne reversed) and a type whale dequantizes, and none may be left over.
   */
  static Map<String, String> tensorMap(GgufFile f, HfConfig c) throws IOException {
    Map<String, String> ggufToHf = new LinkedHashMap<>();
    ggufToHf.put("token_embd.weight", "model.embed_tokens.weight");
    ggufToHf.put("output_norm.weight", "model.norm.weight");
    ggufToHf.put("output.weight", "lm_head.weight");
    Map<String, String> layer = Map.of(
        "attn_norm", "input_layernorm", "ffn_norm", "post_attention_layernorm",
        "attn_q", "self_attn.q_proj", "attn_k", "self_attn.k_proj", "attn_v", "self_attn.v_proj",
        "attn_output", "self_attn.o_proj", "ffn_gate", "mlp.gate_proj", "ffn_up", "mlp.up_proj",
        "ffn_down", "mlp.down_proj");
    for (int i = 0; i < c.layers(); i++) {
      for (Map.Entry<String, String> e : layer.entrySet()) {
        ggufToHf.put("blk." + i + "." + e.getKey() + ".weight",
            "model.layers." + i + "." + e.getValue() + ".weight");
      }
    }
    for (GgufFile.Tensor t : f.tensors().values()) {
      if (!ggufToHf.containsKey(t.name())) {
        throw new IOException(f.path() + ": tensor " + t.name() + " has no place in a "
            + c.layers() + "-layer Llama" + (t.name().equals("rope_freqs.weight")
                ? " (it holds Llama 3.1-style RoPE scaling, which the import does not support)" : ""));
      }
    }
    Map<String, String> hfToGguf = new LinkedHashMap<>();
    ggufToHf.forEach((g, h) -> hfToGguf.put(h, g));
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, long[]> e : LlamaDecoder.shapes(c).entrySet()) {
      String name = hfToGguf.get(e.getKey());
      GgufFile.Tensor t = name == null ? null : f.tensor(name);
      if (t == null) {
        throw new IOException(f.path() + ": tensor " + name + " is missing (it becomes "
            + e.getKey() + ")");
      }
      if (!java.util.Arrays.equals(t.shape(), e.getValue())) {
        throw new IOException(f.path() + ": tensor " + name + " has ne "
            + java.util.Arrays.toString(t.ne()) + ", i.e. shape " + java.util.Arrays.toString(t.shape())
            + ", but the metadata implies " + java.util.Arrays.toString(e.getValue()));
      }
      if (!Dequantizer.SUPPORTED.contains(t.type())) {
        throw Dequantizer.unsupported(f, t);
      }
      out.put(e.getKey(), name);
    }
    return out;
  }

  /** One tensor as float32 in HF's layout: q and k rows un-permuted. */
  private static float[] values(GgufFile f, GgufFile.Tensor t, HfConfig c) throws IOException {
    float[] v = Dequantizer.read(f, t);
    if (t.name().endsWith(".attn_q.weight")) {
      return unpermute(v, c.heads(), c.hiddenSize());
    }
    if (t.name().endsWith(".attn_k.weight")) {
      return unpermute(v, c.kvHeads(), c.hiddenSize());
    }
    return v;
  }

  /**
   * Undoes llama.cpp's conversion-time reordering of q/k rows. transformers' RoPE rotates the two
   * halves of each head (i, i + d/2); ggml's rotates adjacent pairs (2i, 2i + 1), so the converter
   * interleaved each head's rows: GGUF row 2j + i of a head is HF row i * d/2 + j (i in 0, 1).
   */
  static float[] unpermute(float[] w, int heads, int cols) {
    int rows = w.length / cols;
    int headDim = rows / heads;
    int half = headDim / 2;
    float[] out = new float[w.length];
    for (int h = 0; h < heads; h++) {
      for (int i = 0; i < 2; i++) {
        for (int j = 0; j < half; j++) {
          int hfRow = h * headDim + i * half + j;
          int ggufRow = h * headDim + 2 * j + i;
          System.arraycopy(w, ggufRow * cols, out, hfRow * cols, cols);
        }
      }
    }
    return out;
  }

  private static ObjectNode configJson(HfConfig c, GgufTokenizer tok, String dtype) {
    ObjectNode j = JSON.createObjectNode();
    j.putArray("architectures").add(c.architecture());
    j.put("model_type", "llama");
    j.put("hidden_size", c.hiddenSize());
    j.put("intermediate_size", c.intermediateSize());
    j.put("num_hidden_layers", c.layers());
    j.put("num_attention_heads", c.heads());
    j.put("num_key_value_heads", c.kvHeads());
    j.put("head_dim", c.headDim());
    j.put("max_position_embeddings", c.maxPositions());
    j.put("rms_norm_eps", c.rmsNormEps());
    j.put("rope_theta", c.rope().theta());
    j.putNull("rope_scaling");
    j.put("vocab_size", c.vocabSize());
    j.put("tie_word_embeddings", c.tieWordEmbeddings());
    j.put("hidden_act", "silu");
    j.put("attention_bias", false);
    j.put("mlp_bias", false);
    j.put("attention_dropout", 0.0);
    j.put("initializer_range", 0.02);
    j.put("pretraining_tp", 1);
    j.put("use_cache", true);
    tok.putSpecialIds(j);
    j.put("torch_dtype", dtype);
    return j;
  }

  private static void write(Path file, ObjectNode json) throws IOException {
    JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), json);
  }

  /** Renames {@code tmp} to {@code out}; an existing {@code out} is set aside first, then deleted. */
  private static void moveIntoPlace(Path tmp, Path out) throws IOException {
    Path old = null;
    if (Files.exists(out)) {
      old = Files.createTempDirectory(out.getParent(), "." + out.getFileName() + ".old-");
      Files.delete(old);
      Files.move(out, old, StandardCopyOption.ATOMIC_MOVE);
    }
    try {
      Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      if (old != null) {
        Files.move(old, out, StandardCopyOption.ATOMIC_MOVE); // put the old one back
      }
      throw e;
    }
    if (old != null) {
      deleteTree(old);
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
