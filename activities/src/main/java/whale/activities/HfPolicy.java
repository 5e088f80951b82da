package whale.activities;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import whale.model.gguf.ModelFetcher;
import whale.model.hf.CudaCheck;
import whale.model.hf.HfCheckpoint;
import whale.model.hf.HfExport;
import whale.model.hf.HfModel;
import whale.model.hf.LlamaDecoder;
import whale.store.ArtifactStore;
import whale.store.S3Models;
import whale.store.S3Remote;
import whale.workflows.Device;
import whale.workflows.Dtype;
import whale.workflows.ExperimentSpec;
import whale.workflows.Finetune;
import whale.workflows.activities.BaseModelRequest;

/**
 * A Hugging Face model as whale's policy, in the artifact store. Two kinds of checkpoint reference
 * travel through the workflow, told apart by their first bytes (a builtin checkpoint starts
 * "WHALEGPT"):
 *
 * <ul>
 *   <li>the base: a small JSON descriptor ({@link Base}) naming the model directory, a fingerprint
 *       of its weights, and how RSFT trains it; the directory itself stays where the user put it,
 *       readable by every worker at the same path;
 *   <li>a trained step: an {@link HfCheckpoint} directory (LoRA: the PEFT adapter, AdamW state and
 *       the base's path and fingerprint; full: float32 weights and AdamW state) zipped into one
 *       object, unpacked once per store under {@code hf/<hex>} when a worker loads it.
 * </ul>
 */
public final class HfPolicy {
  static final String FORMAT = "whale-hf-base/1";
  private static final LocalDateTime ZIP_TIME = LocalDateTime.of(1980, 1, 1, 0, 0);

  private HfPolicy() {}

  /**
   * The base descriptor's content.
   *
   * @param lora the adapters RSFT attaches when finetune is lora (seeded by {@code seed})
   */
  public record Base(String format, String path, String fingerprint, Dtype dtype, Device device,
      Finetune finetune, @JsonInclude(JsonInclude.Include.NON_NULL) ExperimentSpec.LoraSpec lora,
      long seed) {}

  /*
   * The spec's model settings (workflows: Dtype, Device, ExperimentSpec.LoraSpec) and the model's
   * (HfModel.Placement, HfModel.LoraSpec) are two closed sets and two records on purpose: the
   * workflows module (the Temporal contracts, JSON with defaults and unknown-field checks) sees no
   * model module, and the model module (DJL) sees no workflow. These two methods are the one place
   * where the spec's become the model's; loraTargetsAgreeWithTheValidator and
   * placementSpellingsAgreeWithTheSpec keep the closed sets equal.
   */

  /** The model's placement for a base's dtype and device (null, from older bases: float32, cpu). */
  static HfModel.Placement placement(Dtype dtype, Device device) {
    return HfModel.Placement.of(dtype == null ? null : dtype.json(),
        device == null ? null : device.json());
  }

  /** The model's LoRA settings for the spec's. */
  static HfModel.LoraSpec lora(ExperimentSpec.LoraSpec l) {
    return new HfModel.LoraSpec(l.rank(), l.alpha(), l.targets());
  }

  /** Whether {@code ref} names a Hugging Face checkpoint (base or step) rather than a builtin one. */
  public static boolean isHf(ArtifactStore store, String ref) {
    return CheckpointKind.of(store.path(ref)).huggingFace();
  }

  /**
   * Checks the model directory (config, every tensor's presence, shape and dtype, tokenizer) and
   * stores the descriptor. A problem is the user's to fix, so it fails the run for good, naming
   * model.path and the file.
   */
  static String prepareBase(ArtifactStore store, BaseModelRequest req) {
    ExperimentSpec.ModelSpec m = req.model();
    Path dir;
    try {
      dir = modelDirectory(m, System.err);
    } catch (IllegalArgumentException e) {
      throw ApplicationFailure.newNonRetryableFailureWithCause(e.getMessage(), "InvalidModel", e);
    } catch (IOException e) {
      // pip or the registry failed: retried, a network comes back
      throw new UncheckedIOException("model.name " + m.name() + ": " + e.getMessage(), e);
    }
    String fingerprint;
    try {
      checkDirectory(dir);
      fingerprint = HfCheckpoint.fingerprint(dir);
    } catch (IOException e) {
      throw ApplicationFailure.newNonRetryableFailureWithCause("model.path: " + e.getMessage(),
          "InvalidModel", e);
    }
    if (m.deviceKind() == Device.CUDA) {
      requireGpu(); // here already, so a run on a worker without one fails before any work
    }
    Finetune finetune = req.finetune() == null ? Finetune.LORA : req.finetune();
    // an S3 model is named by its URI: each worker fetches it into its own cache
    String where = m.name() == null && S3Remote.isS3(m.path()) ? m.path() : dir.toString();
    return store.putJson(new Base(FORMAT, where, fingerprint, m.dtypeKind(),
        m.deviceKind(), finetune, finetune == Finetune.LORA
            ? (req.lora() == null ? ExperimentSpec.LoraSpec.defaults() : req.lora()) : null,
        req.seed()));
  }

  /**
   * The spec's model directory: model.path as written, or model.name fetched into this machine's
   * model cache ({@link ModelFetcher}) unless it is there already (progress to {@code log}).
   *
   * @throws IllegalArgumentException for a name whale does not know
   * @throws IOException when the fetch fails (no pip, registry unreachable)
   */
  public static Path modelDirectory(ExperimentSpec.ModelSpec m, java.io.PrintStream log)
      throws IOException {
    if (m.name() == null) {
      return localModel(m.path(), log);
    }
    ModelFetcher.Known k;
    try {
      k = ModelFetcher.known(m.name());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("model.name: " + e.getMessage(), e);
    }
    return ModelFetcher.fetch(k, ModelFetcher.cacheRoot(null), ModelFetcher.python(null), log);
  }

  /**
   * A model directory as a spec or a base names it: a local path, or {@code s3://…} fetched once into
   * this machine's model cache ({@link S3Models}).
   */
  static Path localModel(String path, java.io.PrintStream log) {
    if (S3Remote.isS3(path)) {
      return S3Models.fetch(path, ModelFetcher.cacheRoot(null), log);
    }
    return Path.of(path).toAbsolutePath().normalize();
  }

  /** {@link LlamaDecoder#check}, with a missing directory said as such. */
  public static void checkDirectory(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IOException(dir + " is not a directory (a Hugging Face model directory is needed)");
    }
    LlamaDecoder.check(dir);
  }

  /** A private model, ready to fine-tune: the base with its training mode chosen, or a step resumed. */
  static HfModel loadForTraining(ArtifactStore store, String ref) {
    return load(store, ref, true);
  }

  /** A model for sampling only (a base is loaded without adapters: fresh ones add exactly zero). */
  static HfModel loadForSampling(ArtifactStore store, String ref) {
    return load(store, ref, false);
  }

  private static HfModel load(ArtifactStore store, String ref, boolean train) {
    try {
      return loadOn(store, ref, train);
    } catch (CudaCheck.GpuUnavailableException e) {
      throw noGpu(e);
    }
  }

  private static void requireGpu() {
    try {
      CudaCheck.require();
    } catch (CudaCheck.GpuUnavailableException e) {
      throw noGpu(e);
    }
  }

  /**
   * This worker's environment will not grow a GPU between retries: fail for good, saying what is
   * missing (a worker started with --device cuda checks the same at start).
   */
  private static ApplicationFailure noGpu(CudaCheck.GpuUnavailableException e) {
    return ApplicationFailure.newNonRetryableFailureWithCause(e.getMessage(), "GpuUnavailable", e);
  }

  private static HfModel loadOn(ArtifactStore store, String ref, boolean train) {
    Path file = store.path(ref);
    try {
      if (CheckpointKind.of(file) == CheckpointKind.HF_BASE) {
        Base base = store.getJson(ref, Base.class);
        Path dir = localModel(base.path(), System.err);
        try {
          checkDirectory(dir);
          if (!HfCheckpoint.fingerprint(dir).equals(base.fingerprint())) {
            throw new IOException(dir + " no longer holds the weights this run started from "
                + "(config.json or safetensors headers changed)");
          }
        } catch (IOException e) {
          // every retry would read the same directory
          throw ApplicationFailure.newNonRetryableFailureWithCause("model.path: " + e.getMessage(),
              "InvalidModel", e);
        }
        HfModel model = HfModel.load(dir, HfModel.LINE, placement(base.dtype(), base.device()));
        if (train) {
          if (base.finetune() == Finetune.LORA) {
            model.trainLora(lora(base.lora()), base.seed());
          } else {
            model.trainFull();
          }
        }
        return model;
      }
      Path dir = unpacked(store, ref, file);
      return train ? HfModel.resume(dir, HfModel.LINE) : HfModel.open(dir, HfModel.LINE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot load Hugging Face checkpoint " + ref, e);
    }
  }

  /** Saves the model's training checkpoint as one zipped object; returns its reference. */
  static String save(ArtifactStore store, HfModel model) {
    Path dir = store.newTempFile(".hfckpt");
    Path zip = store.newTempFile(".zip");
    try {
      Files.delete(dir);
      model.save(dir);
      zip(dir, zip);
      deleteTree(dir);
      return store.putFile(zip);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write Hugging Face checkpoint", e);
    }
  }

  /**
   * The checkpoint directory of a step reference (unpacked on first use; the reference is checked
   * against its bytes first, so the unpacked copy is of intact content). For {@code whale export}.
   */
  public static Path checkpointDir(ArtifactStore store, String ref) {
    Path file = store.path(ref);
    CheckpointKind kind = CheckpointKind.of(file);
    if (kind != CheckpointKind.HF_STEP) {
      throw new IllegalArgumentException(ref + " is not a Hugging Face RSFT step checkpoint"
          + (kind == CheckpointKind.HF_BASE ? " (it is a run's base: export the model directory itself)"
              : " (it is a builtin model's checkpoint)"));
    }
    try {
      return unpacked(store, ref, file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot unpack " + ref, e);
    }
  }

  /**
   * A checkpoint reference's model for sampling, outside any run ({@code whale generate}): a
   * base's directory as it is, a step with its adapters or fine-tuned weights.
   */
  public static HfModel open(ArtifactStore store, String ref) {
    if (!isHf(store, ref)) {
      throw new IllegalArgumentException(ref + " is a builtin model's checkpoint, not a Hugging "
          + "Face one");
    }
    return loadForSampling(store, ref);
  }

  /**
   * Writes an RSFT step's checkpoint where transformers, peft and vLLM load it: a LoRA step as a
   * PEFT adapter directory (or, with {@code merge}, a model directory with the adapters folded
   * in); a full step as a model directory. AdamW's state and whale's metadata stay behind.
   */
  public static void export(ArtifactStore store, String ref, Path out, boolean merge)
      throws IOException {
    Path dir = checkpointDir(store, ref);
    try (HfModel model = HfModel.open(dir, HfModel.LINE)) {
      if (!model.decoder().adapters().isEmpty() && !merge) {
        HfExport.exportAdapter(model.decoder(), model.directory(), out);
      } else {
        HfExport.exportModel(model.decoder(), model.directory(), out, merge);
      }
    }
  }

  /** The base model directory an unpacked step checkpoint was trained on (its whale_checkpoint.json). */
  static Path stepBaseDir(Path checkpointDir) {
    try {
      return HfCheckpoint.base(checkpointDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + checkpointDir.resolve(HfCheckpoint.META), e);
    }
  }

  /** The model directory a run's base reference names. */
  public static Path baseDir(ArtifactStore store, String ref) {
    return localModel(store.getJson(ref, Base.class).path(), System.err);
  }

  /**
   * Removes the unpacked copy of a step checkpoint that retention deleted (and any half-unpacked
   * leftovers of it); nothing when there is none.
   */
  static void dropUnpacked(ArtifactStore store, String ref) {
    String hex = ref.substring("sha256:".length());
    Path hf = store.root().resolve("hf");
    if (!Files.isDirectory(hf)) {
      return;
    }
    try (Stream<Path> s = Files.list(hf)) {
      for (Path p : s.filter(d -> d.getFileName().toString().equals(hex)
          || d.getFileName().toString().startsWith(hex + ".tmp-")).toList()) {
        deleteTree(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete the unpacked copy of " + ref, e);
    }
  }

  private static Path unpacked(ArtifactStore store, String ref, Path file) throws IOException {
    Path dir = store.root().resolve("hf").resolve(ref.substring("sha256:".length()));
    if (Files.exists(dir.resolve(HfCheckpoint.META))) {
      return dir;
    }
    Path tmp = dir.resolveSibling(dir.getFileName() + ".tmp-" + System.nanoTime());
    Files.createDirectories(tmp);
    try (ZipInputStream in = new ZipInputStream(Files.newInputStream(file))) {
      for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
        Path out = tmp.resolve(e.getName()).normalize();
        if (!out.getParent().equals(tmp)) {
          throw new IOException(ref + ": unexpected entry " + e.getName());
        }
        Files.copy(in, out);
      }
    }
    try {
      Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      if (!Files.exists(dir.resolve(HfCheckpoint.META))) {
        throw e;
      }
      deleteTree(tmp); // another activity unpacked the same content first
    }
    return dir;
  }

  /** A flat directory as a zip whose bytes depend only on the files (sorted names, fixed times). */
  private static void zip(Path dir, Path zip) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.sorted().toList();
    }
    try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(zip))) {
      out.setLevel(1); // float weights barely compress; speed matters more
      for (Path f : files) {
        ZipEntry e = new ZipEntry(f.getFileName().toString());
        e.setTimeLocal(ZIP_TIME);
        out.putNextEntry(e);
        Files.copy(f, out);
        out.closeEntry();
      }
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
