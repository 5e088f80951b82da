package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import whale.model.OwnedArrays;

/**
 * LoRA adapters on a {@link LlamaDecoder}'s projections, fresh or read from a PEFT adapter directory
 * ({@code adapter_config.json} + {@code adapter_model.safetensors}). Tensor names are PEFT's:
 * {@code base_model.model.<module>.lora_A.weight} ([r, in]) and {@code .lora_B.weight} ([out, r]);
 * the update is {@code (alpha / r) * B A x} (alpha / sqrt(r) with rsLoRA).
 */
public final class LoraAdapters {
  public static final String CONFIG = "adapter_config.json";
  public static final String WEIGHTS = "adapter_model.safetensors";
  public static final String PREFIX = "base_model.model.";
  /**
   * In a fixed order: {@code Set.of} iterates in an order salted per JVM, so adapters attached in
   * its order drew their seeded A matrices in a different order in every process.
   */
  public static final Set<String> TARGETS = Collections.unmodifiableSet(new LinkedHashSet<>(List.of(
      "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")));

  private LoraAdapters() {}

  /** The projection's module name in layer {@code layer}: self_attn.* or mlp.*. */
  static String module(int layer, String target) {
    boolean mlp = target.equals("gate_proj") || target.equals("up_proj") || target.equals("down_proj");
    String block = mlp ? "mlp." : "self_attn.";
    return "model.layers." + layer + "." + block + target;
  }

  /**
   * Fresh adapters on every layer's {@code targets}: A uniform in ±1/sqrt(in) (PEFT's Kaiming-uniform
   * default), B zero, so the adapted model starts equal to the base. Seeded; arrays in {@code manager}.
   */
  public static void attachFresh(LlamaDecoder decoder, NDManager manager, int rank, double alpha,
      List<String> targets, long seed) {
    if (rank < 1) {
      throw new IllegalArgumentException("LoRA rank must be >= 1: " + rank);
    }
    for (String t : targets) {
      if (!TARGETS.contains(t)) {
        throw new IllegalArgumentException("LoRA target \"" + t + "\" is not a projection; one of "
            + TARGETS);
      }
    }
    SplittableRandom rng = new SplittableRandom(seed);
    for (int layer = 0; layer < decoder.config().layers(); layer++) {
      for (String t : targets) {
        String module = module(layer, t);
        Shape w = decoder.weights().get(module + ".weight").getShape();
        int in = (int) w.get(1);
        float[] a = new float[rank * in];
        double bound = 1 / Math.sqrt(in);
        for (int i = 0; i < a.length; i++) {
          a[i] = (float) ((rng.nextDouble() * 2 - 1) * bound);
        }
        decoder.attach(module, new LlamaDecoder.Lora(
            OwnedArrays.create(manager, a, new Shape(rank, in)), manager.zeros(new Shape(w.get(0), rank)),
            (float) (alpha / rank)));
      }
    }
  }

  /** Attaches the adapter of a PEFT directory, refusing settings whale does not implement. */
  public static void load(LlamaDecoder decoder, NDManager manager, Path dir) throws IOException {
    Path cfgFile = dir.resolve(CONFIG);
    if (!Files.exists(cfgFile)) {
      throw new IOException(dir + ": no " + CONFIG + " (not a PEFT adapter directory?)");
    }
    JsonNode c = new ObjectMapper().readTree(cfgFile.toFile());
    refuse(cfgFile, c, "peft_type", !c.path("peft_type").asText("LORA").equals("LORA"), "only LORA");
    refuse(cfgFile, c, "use_dora", c.path("use_dora").asBoolean(false), "DoRA is not implemented");
    refuse(cfgFile, c, "bias", !c.path("bias").asText("none").equals("none"), "only \"none\"");
    refuse(cfgFile, c, "fan_in_fan_out", c.path("fan_in_fan_out").asBoolean(false),
        "only false (nn.Linear layout)");
    refuse(cfgFile, c, "rank_pattern", c.path("rank_pattern").size() > 0, "per-module ranks are not implemented");
    refuse(cfgFile, c, "alpha_pattern", c.path("alpha_pattern").size() > 0, "per-module alphas are not implemented");
    int rank = c.path("r").asInt(-1);
    refuse(cfgFile, c, "r", rank < 1, "must be a positive integer");
    double alpha = c.path("lora_alpha").asDouble(rank);
    double scale = c.path("use_rslora").asBoolean(false) ? alpha / Math.sqrt(rank) : alpha / rank;
    Safetensors st = Safetensors.openFile(dir.resolve(WEIGHTS));
    Map<String, String> modules = new LinkedHashMap<>();
    for (String name : st.entries().keySet()) {
      if (!name.startsWith(PREFIX) || !(name.endsWith(".lora_A.weight")
          || name.endsWith(".lora_B.weight"))) {
        throw new IOException(dir.resolve(WEIGHTS) + ": tensor " + name
            + " is not a LoRA A/B weight (" + PREFIX + "<module>.lora_A.weight)");
      }
      modules.put(name.substring(PREFIX.length(), name.length() - ".lora_A.weight".length()), name);
    }
    for (String module : modules.keySet()) {
      NDArray w = decoder.weights().get(module + ".weight");
      if (w == null) {
        throw new IOException(dir.resolve(WEIGHTS) + ": adapter for " + module
            + ", which the base model does not have");
      }
      long out = w.getShape().get(0);
      long in = w.getShape().get(1);
      String owner = dir.resolve(CONFIG) + " (r=" + rank + ") and the base weight " + w.getShape();
      float[] a = st.read(PREFIX + module + ".lora_A.weight", new long[] {rank, in}, owner);
      float[] b = st.read(PREFIX + module + ".lora_B.weight", new long[] {out, rank}, owner);
      decoder.attach(module, new LlamaDecoder.Lora(OwnedArrays.create(manager, a, new Shape(rank, in)),
          OwnedArrays.create(manager, b, new Shape(out, rank)), (float) scale));
    }
  }

  private static void refuse(Path file, JsonNode c, String field, boolean bad, String why)
      throws IOException {
    if (bad) {
      throw new IOException(file + ": field \"" + field + "\" = " + c.path(field) + ": " + why);
    }
  }

  /** The adapters' arrays by PEFT tensor name, A then B per module. */
  public static LinkedHashMap<String, NDArray> parameters(LlamaDecoder decoder) {
    LinkedHashMap<String, NDArray> out = new LinkedHashMap<>();
    for (Map.Entry<String, LlamaDecoder.Lora> e : decoder.adapters().entrySet()) {
      out.put(PREFIX + e.getKey() + ".lora_A.weight", e.getValue().a());
      out.put(PREFIX + e.getKey() + ".lora_B.weight", e.getValue().b());
    }
    return out;
  }
}
