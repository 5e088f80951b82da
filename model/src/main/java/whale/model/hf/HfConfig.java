package whale.model.hf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What whale reads from a Hugging Face {@code config.json} for the Llama-family decoder, validated:
 * a value the decoder does not implement is refused with the file and field named rather than
 * silently computing something else.
 *
 * <p>Both config layouts are read: transformers 4 ({@code rope_theta}, {@code rope_scaling}) and
 * transformers 5 ({@code rope_parameters}).
 *
 * @param qkvBias q/k/v projections have biases (always for Qwen2, {@code attention_bias} otherwise)
 * @param oBias the output projection has a bias ({@code attention_bias}, never for Qwen2)
 * @param qkNorm per-head RMSNorm of q and k before RoPE (Qwen3)
 * @param eosIds {@code eos_token_id} of config.json (may be empty)
 * @param padId {@code pad_token_id} of config.json, or -1
 */
public record HfConfig(
    String architecture,
    int hiddenSize,
    int intermediateSize,
    int layers,
    int heads,
    int kvHeads,
    int headDim,
    int vocabSize,
    double rmsNormEps,
    int maxPositions,
    boolean tieWordEmbeddings,
    boolean qkvBias,
    boolean oBias,
    boolean mlpBias,
    boolean qkNorm,
    Rope rope,
    List<Integer> eosIds,
    int padId) {

  public static final String FILE = "config.json";
  public static final Set<String> ARCHITECTURES =
      Set.of("LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "MistralForCausalLM");

  /**
   * Rotary embedding parameters.
   *
   * @param type "default" or "llama3"
   * @param factor, lowFreqFactor, highFreqFactor, originalMaxPositions llama3 scaling (else unused)
   */
  public record Rope(String type, double theta, double factor, double lowFreqFactor,
      double highFreqFactor, int originalMaxPositions) {

    /** inv_freq[i] = theta^(-2i/dim), rescaled per wavelength for llama3 as Meta's Llama 3.1 does. */
    public double[] inverseFrequencies(int dim) {
      double[] inv = new double[dim / 2];
      for (int i = 0; i < inv.length; i++) {
        // float32 like transformers' inv_freq, so positions far out agree to the ulp it has
        inv[i] = (float) (1.0 / Math.pow(theta, (2.0 * i) / dim));
        if (type.equals("llama3")) {
          double lowWavelen = originalMaxPositions / lowFreqFactor;
          double highWavelen = originalMaxPositions / highFreqFactor;
          double wavelen = 2 * Math.PI / inv[i];
          if (wavelen > lowWavelen) {
            inv[i] = inv[i] / factor;
          } else if (wavelen >= highWavelen) {
            double smooth = (originalMaxPositions / wavelen - lowFreqFactor)
                / (highFreqFactor - lowFreqFactor);
            inv[i] = (1 - smooth) * inv[i] / factor + smooth * inv[i];
          }
        }
      }
      return inv;
    }
  }

  /** Reads and validates {@code dir/config.json}. */
  public static HfConfig read(Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    if (!Files.exists(file)) {
      throw new IOException(dir + ": no " + FILE + " (not a Hugging Face model directory?)");
    }
    JsonNode c;
    try {
      c = new ObjectMapper().readTree(file.toFile());
    } catch (IOException e) {
      throw new IOException(file + ": not valid JSON: " + e.getMessage(), e);
    }
    Reader r = new Reader(file, c);
    JsonNode archs = c.path("architectures");
    if (!archs.isArray() || archs.size() != 1) {
      throw r.bad("architectures", "must list exactly one architecture, one of " + ARCHITECTURES);
    }
    String arch = archs.get(0).asText();
    if (!ARCHITECTURES.contains(arch)) {
      throw r.bad("architectures", "\"" + arch + "\" is not implemented; whale implements "
          + ARCHITECTURES);
    }
    String act = c.path("hidden_act").asText("silu");
    if (!act.equals("silu")) {
      throw r.bad("hidden_act", "\"" + act + "\" is not supported (SwiGLU needs silu)");
    }
    int hidden = r.positive("hidden_size");
    int heads = r.positive("num_attention_heads");
    int kvHeads = c.hasNonNull("num_key_value_heads") ? r.positive("num_key_value_heads") : heads;
    if (heads % kvHeads != 0) {
      throw r.bad("num_key_value_heads", kvHeads + " does not divide num_attention_heads " + heads);
    }
    int headDim = c.hasNonNull("head_dim") ? r.positive("head_dim") : hidden / heads;
    if (!c.hasNonNull("head_dim") && hidden % heads != 0) {
      throw r.bad("num_attention_heads", heads + " does not divide hidden_size " + hidden);
    }
    if (headDim % 2 != 0) {
      throw r.bad("head_dim", headDim + " is odd; rotary embeddings need an even head size");
    }
    int maxPos = r.positive("max_position_embeddings");
    checkNoSlidingWindow(r, c, arch, maxPos);
    boolean qwen2 = arch.equals("Qwen2ForCausalLM");
    boolean attentionBias = c.path("attention_bias").asBoolean(false);
    return new HfConfig(
        arch,
        hidden,
        r.positive("intermediate_size"),
        r.positive("num_hidden_layers"),
        heads,
        kvHeads,
        headDim,
        r.positive("vocab_size"),
        c.path("rms_norm_eps").asDouble(1e-6),
        maxPos,
        c.path("tie_word_embeddings").asBoolean(false),
        qwen2 || attentionBias,
        !qwen2 && attentionBias,
        c.path("mlp_bias").asBoolean(false),
        arch.equals("Qwen3ForCausalLM"),
        rope(r, c),
        ids(c.path("eos_token_id")),
        c.path("pad_token_id").asInt(-1));
  }

  private static void checkNoSlidingWindow(Reader r, JsonNode c, String arch, int maxPos)
      throws IOException {
    if (c.path("use_sliding_window").asBoolean(false)) {
      throw r.bad("use_sliding_window", "true: whale has no sliding-window attention");
    }
    // Mistral applies sliding_window whenever it is set; a window as long as the context is a no-op.
    if (arch.equals("MistralForCausalLM") && c.hasNonNull("sliding_window")
        && c.get("sliding_window").asLong() < maxPos) {
      throw r.bad("sliding_window", c.get("sliding_window").asLong()
          + " (shorter than max_position_embeddings " + maxPos
          + "): whale has no sliding-window attention");
    }
    for (JsonNode t : c.path("layer_types")) {
      if (!t.asText().equals("full_attention")) {
        throw r.bad("layer_types", "\"" + t.asText()
            + "\": whale implements full_attention layers only");
      }
    }
  }

  private static Rope rope(Reader r, JsonNode c) throws IOException {
    // transformers 5: rope_parameters holds theta and type; 4: rope_theta + optional rope_scaling
    String field = c.hasNonNull("rope_parameters") ? "rope_parameters" : "rope_scaling";
    JsonNode p = c.path(field);
    double theta = p.path("rope_theta").asDouble(c.path("rope_theta").asDouble(10000.0));
    String type = p.path("rope_type").asText(p.path("type").asText("default"));
    if (p.hasNonNull("partial_rotary_factor") && p.get("partial_rotary_factor").asDouble() != 1.0
        || c.hasNonNull("partial_rotary_factor") && c.get("partial_rotary_factor").asDouble() != 1.0) {
      throw r.bad(field + ".partial_rotary_factor", "only 1.0 (rotary over the whole head) is supported");
    }
    switch (type) {
      case "default":
        return new Rope("default", theta, 1, 1, 1, 0);
      case "llama3":
        return new Rope("llama3", theta,
            r.number(p, field, "factor"),
            r.number(p, field, "low_freq_factor"),
            r.number(p, field, "high_freq_factor"),
            (int) r.number(p, field, "original_max_position_embeddings"));
      default:
        throw r.bad(field + ".rope_type", "\"" + type
            + "\" is not supported; whale implements default and llama3");
    }
  }

  static List<Integer> ids(JsonNode node) {
    List<Integer> out = new ArrayList<>();
    if (node.isArray()) {
      node.forEach(n -> out.add(n.asInt()));
    } else if (node.isNumber()) {
      out.add(node.asInt());
    }
    return out;
  }

  /** Field access that names config.json and the field in every complaint. */
  private record Reader(Path file, JsonNode c) {
    IOException bad(String field, String why) {
      return new IOException(file + ": field \"" + field + "\": " + why);
    }

    int positive(String field) throws IOException {
      JsonNode n = c.get(field);
      if (n == null || !n.canConvertToInt() || n.asInt() <= 0) {
        throw bad(field, n == null ? "missing" : "must be a positive integer, not " + n);
      }
      return n.asInt();
    }

    double number(JsonNode p, String parent, String field) throws IOException {
      JsonNode n = p.get(field);
      if (n == null || !n.isNumber()) {
        throw bad(parent + "." + field, n == null ? "missing" : "must be a number, not " + n);
      }
      return n.asDouble();
    }
  }
}
