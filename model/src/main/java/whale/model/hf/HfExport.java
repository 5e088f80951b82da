package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Writes a decoder back out in the formats transformers, peft and vLLM load as they are: a PEFT
 * adapter directory, or a Hugging Face model directory (float32 safetensors, config and tokenizer
 * files copied from the base), optionally with the adapters merged into the weights.
 */
public final class HfExport {
  /** Files of the base directory that travel with an exported model unchanged. */
  static final List<String> COPIED = List.of("tokenizer.json", "tokenizer_config.json",
      "special_tokens_map.json", "chat_template.jinja", "generation_config.json");

  private HfExport() {}

  /** adapter_config.json and adapter_model.safetensors of the decoder's LoRA adapters. */
  public static void exportAdapter(LlamaDecoder d, Path baseDir, Path out) throws IOException {
    if (d.adapters().isEmpty()) {
      throw new IllegalArgumentException("the model has no LoRA adapters to export");
    }
    int rank = -1;
    float scale = Float.NaN;
    TreeSet<String> targets = new TreeSet<>();
    Map<String, NDArray> tensors = new LinkedHashMap<>();
    for (Map.Entry<String, LlamaDecoder.Lora> e : d.adapters().entrySet()) {
      LlamaDecoder.Lora l = e.getValue();
      int r = (int) l.a().getShape().get(0);
      if (rank >= 0 && (r != rank || l.scale() != scale)) {
        throw new IllegalArgumentException("adapters differ in rank or scale (" + e.getKey()
            + "); a PEFT config holds one of each");
      }
      rank = r;
      scale = l.scale();
      targets.add(e.getKey().substring(e.getKey().lastIndexOf('.') + 1));
      tensors.put(LoraAdapters.PREFIX + e.getKey() + ".lora_A.weight", l.a());
      tensors.put(LoraAdapters.PREFIX + e.getKey() + ".lora_B.weight", l.b());
    }
    Files.createDirectories(out);
    ObjectMapper json = new ObjectMapper();
    ObjectNode c = json.createObjectNode();
    c.put("peft_type", "LORA");
    c.put("task_type", "CAUSAL_LM");
    c.put("base_model_name_or_path", baseDir.toAbsolutePath().toString());
    c.put("r", rank);
    c.put("lora_alpha", (double) scale * rank);
    c.put("lora_dropout", 0.0);
    c.put("bias", "none");
    c.put("fan_in_fan_out", false);
    c.put("use_rslora", false);
    c.put("use_dora", false);
    c.put("inference_mode", true);
    var t = c.putArray("target_modules");
    targets.forEach(t::add);
    writeF32(out.resolve(LoraAdapters.WEIGHTS), tensors);
    json.writerWithDefaultPrettyPrinter().writeValue(out.resolve(LoraAdapters.CONFIG).toFile(), c);
  }

  /**
   * A model directory with float32 weights. With {@code merge}, each adapter is folded in as
   * W + scale * B A; without it, a decoder that has adapters is refused (they would be lost).
   */
  public static void exportModel(LlamaDecoder d, Path baseDir, Path out, boolean merge)
      throws IOException {
    if (!d.adapters().isEmpty() && !merge) {
      throw new IllegalArgumentException("the model has LoRA adapters: export them with "
          + "exportAdapter, or merge them into the weights");
    }
    Map<String, NDArray> weights = d.weights();
    Files.createDirectories(out);
    // one tensor at a time (merged on demand): a Java copy of the whole model would grow the heap
    // by its size, and the JVM keeps a heap it has grown
    writeF32(out.resolve(Safetensors.SINGLE), weights, name -> {
      String module = name.endsWith(".weight")
          ? name.substring(0, name.length() - ".weight".length()) : null;
      LlamaDecoder.Lora lora = module == null ? null : d.adapters().get(module);
      if (lora == null) {
        return floats(weights.get(name));
      }
      try (NDArray w = weights.get(name).toType(DataType.FLOAT32, true);
          NDArray delta = lora.b().matMul(lora.a()).mul(lora.scale());
          NDArray merged = w.add(delta)) {
        return merged.toFloatArray();
      }
    });
    ObjectMapper json = new ObjectMapper();
    ObjectNode config = (ObjectNode) json.readTree(baseDir.resolve(HfConfig.FILE).toFile());
    config.put(config.has("torch_dtype") ? "torch_dtype" : "dtype", "float32");
    json.writerWithDefaultPrettyPrinter().writeValue(out.resolve(HfConfig.FILE).toFile(), config);
    for (String f : COPIED) {
      if (Files.exists(baseDir.resolve(f))) {
        Files.copy(baseDir.resolve(f), out.resolve(f), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  /**
   * Writes {@code tensors} (names and shapes, in order) as float32 safetensors, asking {@code
   * values} for one tensor's values at a time.
   */
  static void writeF32(Path file, Map<String, NDArray> tensors, Safetensors.TensorSource values)
      throws IOException {
    Map<String, long[]> shapes = new LinkedHashMap<>();
    tensors.forEach((name, a) -> shapes.put(name, a.getShape().getShape()));
    Safetensors.write(file, shapes, "F32", values);
  }

  /** Writes {@code tensors} as float32 safetensors, one tensor's values at a time. */
  static void writeF32(Path file, Map<String, NDArray> tensors) throws IOException {
    writeF32(file, tensors, name -> floats(tensors.get(name)));
  }

  /** A tensor's values as float32 (a float16 base is widened, exactly). */
  static float[] floats(NDArray a) {
    if (a.getDataType() == DataType.FLOAT32) {
      return a.toFloatArray();
    }
    try (NDArray wide = a.toType(DataType.FLOAT32, true)) {
      return wide.toFloatArray();
    }
  }
}
