package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import whale.model.AdamW;

/**
 * A training checkpoint of an {@link HfModel}, as a directory that is also what transformers/peft
 * load: for LoRA the PEFT adapter only (megabytes) plus a fingerprint of the base directory it
 * needs; for full fine-tuning a float32 model directory. Beside it, AdamW's state
 * ({@code optimizer.safetensors}: m/NAME, v/NAME) and {@code whale_checkpoint.json}, which also
 * records the base's {@code dtype} (a LoRA base reloads in the precision it was trained on; always
 * float32 for full) and the {@code device}; checkpoints written before these fields read as
 * float32 on cpu.
 */
public final class HfCheckpoint {
  public static final String META = "whale_checkpoint.json";
  public static final String OPTIMIZER = "optimizer.safetensors";
  private static final ObjectMapper JSON = new ObjectMapper();

  private HfCheckpoint() {}

  /** Writes the checkpoint to {@code out} (replacing it) via a sibling directory and a rename. */
  static void save(HfModel model, SftTrainer trainer, boolean lora, Path out) throws IOException {
    Path tmp = out.resolveSibling(out.getFileName() + ".tmp-" + System.nanoTime());
    Files.createDirectories(tmp);
    if (lora) {
      HfExport.exportAdapter(model.decoder(), model.directory(), tmp);
    } else {
      HfExport.exportModel(model.decoder(), model.directory(), tmp, false);
    }
    AdamW opt = trainer.optimizer();
    Map<String, NDArray> moments = new LinkedHashMap<>();
    for (String name : trainer.trainable().keySet()) {
      moments.put("m/" + name, opt.firstMoment(name));
      moments.put("v/" + name, opt.secondMoment(name));
    }
    HfExport.writeF32(tmp.resolve(OPTIMIZER), moments);
    ObjectNode meta = JSON.createObjectNode();
    meta.put("finetune", lora ? "lora" : "full");
    meta.put("dtype", model.placement().dtype().spelling());
    meta.put("device", model.placement().device().spelling());
    meta.put("base", model.directory().toAbsolutePath().toString());
    meta.put("baseFingerprint", fingerprint(model.directory()));
    meta.put("optimizerSteps", opt.stepCount());
    JSON.writerWithDefaultPrettyPrinter().writeValue(tmp.resolve(META).toFile(), meta);
    if (Files.exists(out)) {
      deleteTree(out);
    }
    Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
  }

  /** The model, its adapters or weights, and its optimizer state, ready to continue training. */
  /** The base model directory a checkpoint was trained on (its {@value #META}'s "base"). */
  public static Path base(Path dir) throws IOException {
    Path metaFile = dir.resolve(META);
    if (!Files.exists(metaFile)) {
      throw new IOException(dir + ": no " + META + " (not a whale Hugging Face checkpoint)");
    }
    return Path.of(JSON.readTree(metaFile.toFile()).path("base").asText());
  }

  /**
   * The model a checkpoint holds; with {@code train} also its trainer and AdamW state, ready to
   * continue, else the weights (and adapters) alone: a full step's two moments are twice its
   * weights (1.08 GB on SmolLM2-135M), which sampling and export never read.
   */
  static HfModel load(Path dir, List<String> stopStrings, boolean train) throws IOException {
    Path metaFile = dir.resolve(META);
    if (!Files.exists(metaFile)) {
      throw new IOException(dir + ": no " + META + " (not a whale Hugging Face checkpoint)");
    }
    JsonNode meta = JSON.readTree(metaFile.toFile());
    String finetune = meta.path("finetune").asText();
    HfModel.Placement placement;
    try {
      placement = HfModel.Placement.of(meta.path("dtype").asText("float32"),
          meta.path("device").asText("cpu"));
    } catch (IllegalArgumentException e) {
      throw new IOException(metaFile + ": " + e.getMessage(), e);
    }
    HfModel model;
    if (finetune.equals("lora")) {
      Path base = Path.of(meta.path("base").asText());
      String expected = meta.path("baseFingerprint").asText();
      if (!Files.isDirectory(base) || !fingerprint(base).equals(expected)) {
        throw new IOException(metaFile + ": field \"base\": " + base + (Files.isDirectory(base)
            ? " no longer holds the weights this adapter was trained on (config.json or safetensors"
              + " headers changed)" : " does not exist"));
      }
      model = HfModel.load(base, stopStrings, placement);
      try {
        LoraAdapters.load(model.decoder(), model.manager(), dir);
        if (train) {
          model.resumeTraining(SftTrainer.lora(model.decoder(), model.manager()));
        }
      } catch (IOException | RuntimeException e) {
        model.close();
        throw e;
      }
    } else if (finetune.equals("full")) {
      model = HfModel.load(dir, stopStrings, placement);
      if (train) {
        model.resumeTraining(SftTrainer.full(model.decoder(), model.manager()));
      } else {
        // a step's weights are its own (no other directory holds them): owned, they count in
        // the sampling cache's byte bound (ActivityRuntime), as a shared base does not
        model.decoder().ownWeights(model.manager());
      }
    } else {
      throw new IOException(metaFile + ": field \"finetune\": \"" + finetune
          + "\" is not lora or full");
    }
    if (!train) {
      return model;
    }
    try {
      Safetensors st = Safetensors.openFile(dir.resolve(OPTIMIZER));
      AdamW opt = model.trainer().optimizer();
      // one tensor at a time, from the file into libtorch's memory without a Java array
      for (Map.Entry<String, NDArray> e : model.trainer().trainable().entrySet()) {
        long[] shape = e.getValue().getShape().getShape();
        String owner = "the trainable tensor " + e.getKey();
        NDManager into = opt.firstMoment(e.getKey()).getManager();
        opt.restoreMoments(e.getKey(), st.readArray("m/" + e.getKey(), shape, owner, into),
            st.readArray("v/" + e.getKey(), shape, owner, into));
      }
      opt.restoreStepCount(meta.path("optimizerSteps").asLong());
    } catch (IOException | RuntimeException e) {
      model.close();
      throw e;
    }
    return model;
  }

  /**
   * SHA-256 of config.json and of every safetensors file's name, size and header: cheap to
   * compute for a many-gigabyte base, and it changes when the weights are replaced.
   */
  public static String fingerprint(Path base) throws IOException {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update(Files.readAllBytes(base.resolve(HfConfig.FILE)));
      List<Path> files;
      try (Stream<Path> s = Files.list(base)) {
        files = s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).sorted().toList();
      }
      for (Path f : files) {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
          d.update(f.getFileName().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
          ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
          ch.read(len, 0);
          long headerLen = Math.min(len.flip().getLong(), Math.max(0, ch.size() - 8));
          ByteBuffer head = ByteBuffer.allocate((int) Math.min(headerLen, 100_000_000L));
          ch.read(head, 8);
          d.update(head.flip());
          d.update(ByteBuffer.allocate(8).putLong(0, ch.size()));
        }
      }
      return HexFormat.of().formatHex(d.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
