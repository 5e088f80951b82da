package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.types.DataType;
import io.temporal.failure.ApplicationFailure;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.model.SftExample;
import whale.model.hf.HfCheckpoint;
import whale.model.hf.HfModel;
import whale.model.hf.LoraAdapters;
import whale.workflows.Device;
import whale.workflows.Dtype;
import whale.workflows.ExperimentSpec;
import whale.workflows.Finetune;
import whale.workflows.SpecValidator;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.TaskRef;

/** The Hugging Face policy's references in the artifact store, and its refusals. */
class HfPolicyTest {
  static final TaskRef TASK = new TaskRef("math", 1234, 32, 8, 8);
  @TempDir static Path tmp;
  static ActivityRuntime runtime;
  static WeightActivitiesImpl weights;

  @BeforeAll
  static void open() {
    runtime = ActivityRuntime.open(tmp.resolve("store"));
    weights = new WeightActivitiesImpl(runtime);
  }

  static Path fixture(String name) {
    try {
      return Path.of(HfPolicyTest.class.getResource("/hf/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static Path copy(Path from, Path to) throws Exception {
    Files.createDirectories(to);
    try (var s = Files.list(from)) {
      for (Path f : s.filter(Files::isRegularFile).toList()) {
        Files.copy(f, to.resolve(f.getFileName()));
      }
    }
    return to;
  }

  static BaseModelRequest request(Path dir, String finetune) {
    ExperimentSpec spec = new ExperimentSpec(null, null, 3L, null, null,
        ExperimentSpec.ModelSpec.ofHuggingFace(dir.toString()),
        new ExperimentSpec.RsftSpec(null, null, null, null, null, null, null, finetune, null, null),
        null, null, null, null, null, null, null);
    assertEquals(List.of(), SpecValidator.problems(spec));
    return BaseModelRequest.of(spec, TASK, 11);
  }

  static BaseModelRequest request(Path dir, String dtype, String device) {
    ExperimentSpec spec = new ExperimentSpec(null, null, 3L, null, null,
        new ExperimentSpec.ModelSpec(null, null, null, null, null, null, null, null,
            ExperimentSpec.ModelSpec.HUGGINGFACE, dir.toString(), null, dtype, device, null, null),
        null, null, null, null, null, null, null, null);
    assertEquals(List.of(), SpecValidator.problems(spec));
    return BaseModelRequest.of(spec, TASK, 11);
  }

  @Test
  void aFloat16BaseTrainsLoraAndItsStepReloadsInFloat16() throws Exception {
    String base = weights.prepareBaseModel(request(fixture("qwen2"), "float16", "cpu"));
    assertEquals(Dtype.FLOAT16, runtime.store().getJson(base, HfPolicy.Base.class).dtype());
    List<SftExample> ex = List.of(new SftExample("Q: 1+1\nA:", " 2\n"));
    String ref;
    try (HfModel m = HfPolicy.loadForTraining(runtime.store(), base)) {
      assertEquals(DataType.FLOAT16, m.decoder().baseType());
      m.sft(ex, 1, 1e-2f, 1);
      ref = HfPolicy.save(runtime.store(), m);
    }
    try (HfModel m = HfPolicy.loadForSampling(runtime.store(), ref)) {
      assertEquals(DataType.FLOAT16, m.decoder().baseType());
      assertFalse(m.decoder().adapters().isEmpty());
    }
  }

  @Test
  void cudaOnAWorkerWithoutAGpuFailsForGoodSayingWhatIsMissing() throws Exception {
    if (ai.djl.engine.Engine.getEngine("PyTorch").getGpuCount() > 0) {
      return; // a GPU machine: nothing is missing
    }
    ApplicationFailure f = assertThrows(ApplicationFailure.class,
        () -> weights.prepareBaseModel(request(fixture("qwen2"), "float16", "cuda")));
    assertTrue(f.isNonRetryable());
    assertEquals("GpuUnavailable", f.getType());
    String msg = f.getOriginalMessage();
    assertTrue(msg.startsWith("model.device cuda needs a GPU this process cannot use: ")
        && msg.contains("the PyTorch engine sees no GPU (Engine.getGpuCount() = 0)"), msg);
    // a base stored where a GPU was (written here as that worker would): loading it fails alike
    String ref = runtime.store().putJson(new HfPolicy.Base(HfPolicy.FORMAT,
        fixture("qwen2").toAbsolutePath().normalize().toString(),
        HfCheckpoint.fingerprint(fixture("qwen2")), Dtype.FLOAT32, Device.CUDA, Finetune.LORA,
        ExperimentSpec.LoraSpec.defaults(), 11));
    ApplicationFailure g = assertThrows(ApplicationFailure.class,
        () -> HfPolicy.loadForSampling(runtime.store(), ref));
    assertTrue(g.isNonRetryable());
    assertEquals(msg, g.getOriginalMessage());
  }

  @Test
  void aCheckpointsEpisodeCapsComeFromItsContext() throws Exception {
    try (HfModel m = HfModel.load(fixture("qwen2"), List.of())) {
      // max_position_embeddings 256: half of it for a completion, 8 characters per position
      assertEquals(new whale.model.ModelLimits(2048, 128), m.limits());
    }
    // Qwen2.5's 32k context: a completion is capped at 4096 tokens
    assertEquals(new whale.model.ModelLimits(262144, 4096), whale.model.ModelLimits.forContext(32768));
  }

  @Test
  void loraTargetsAgreeWithTheValidator() {
    assertEquals(LoraAdapters.TARGETS, SpecValidator.LORA_TARGETS);
  }

  @Test
  void placementSpellingsAgreeWithTheSpec() {
    assertEquals(java.util.Arrays.stream(Dtype.values()).map(Dtype::json).toList(),
        java.util.Arrays.stream(HfModel.Placement.Dtype.values()).map(HfModel.Placement.Dtype::spelling)
            .toList());
    assertEquals(java.util.Arrays.stream(Device.values()).map(Device::json).toList(),
        java.util.Arrays.stream(HfModel.Placement.Device.values())
            .map(HfModel.Placement.Device::spelling).toList());
    for (Dtype d : Dtype.values()) {
      for (Device v : Device.values()) {
        HfModel.Placement p = HfPolicy.placement(d, v);
        assertEquals(d.json() + " " + v.json(), p.dtype().spelling() + " " + p.device().spelling());
      }
    }
    assertEquals(HfModel.Placement.CPU_FLOAT32, HfPolicy.placement(null, null));
  }

  @Test
  void baseIsADescriptorOfTheDirectoryWithoutPretraining() throws Exception {
    Path dir = fixture("qwen2");
    String lora = weights.prepareBaseModel(request(dir, null));
    assertEquals(lora, weights.prepareBaseModel(request(dir, "lora")), "lora is the default");
    String full = weights.prepareBaseModel(request(dir, "full"));
    assertNotEquals(lora, full, "how RSFT trains the base is part of its reference");
    assertTrue(HfPolicy.isHf(runtime.store(), lora));
    assertEquals(dir.toAbsolutePath().normalize(), HfPolicy.baseDir(runtime.store(), lora));
    String json = runtime.store().getString(lora);
    assertTrue(json.contains(HfCheckpoint.fingerprint(dir)), json);
    try (HfModel m = HfPolicy.loadForTraining(runtime.store(), lora)) {
      assertFalse(m.decoder().adapters().isEmpty(), "fresh adapters for lora");
    }
    try (HfModel m = HfPolicy.loadForSampling(runtime.store(), lora)) {
      assertTrue(m.decoder().adapters().isEmpty());
    }
  }

  @Test
  void fullFineTuningCheckpointRoundTripsThroughTheStore() throws Exception {
    String base = weights.prepareBaseModel(request(fixture("llama"), "full"));
    List<SftExample> ex = List.of(new SftExample("Q: 1+1\nA:", " 2\n"),
        new SftExample("Q: 2+2\nA:", " 4\n"));
    String ref;
    double before;
    try (HfModel m = HfPolicy.loadForTraining(runtime.store(), base)) {
      before = m.sft(ex, 2, 1e-2f, 1).meanLoss();
      ref = HfPolicy.save(runtime.store(), m);
      assertEquals(ref, HfPolicy.save(runtime.store(), m), "same content, same reference");
    }
    Path dir = HfPolicy.checkpointDir(runtime.store(), ref);
    assertTrue(Files.exists(dir.resolve("model.safetensors")));
    assertTrue(Files.readString(dir.resolve(HfCheckpoint.META)).contains("\"full\""));
    try (HfModel m = HfPolicy.loadForTraining(runtime.store(), ref)) {
      assertTrue(m.sft(ex, 2, 1e-2f, 1).meanLoss() < before, "resumed weights had learned");
    }
  }

  @Test
  void aMissingOrBrokenDirectoryFailsForGoodNamingFieldAndFile() throws Exception {
    Path missing = tmp.resolve("nope");
    ApplicationFailure f = assertThrows(ApplicationFailure.class,
        () -> weights.prepareBaseModel(request(missing, null)));
    assertTrue(f.isNonRetryable());
    assertTrue(f.getOriginalMessage().startsWith("model.path: " + missing + " is not a directory"),
        f.getOriginalMessage());

    Path broken = copy(fixture("qwen2"), tmp.resolve("broken"));
    Files.delete(broken.resolve("tokenizer.json"));
    f = assertThrows(ApplicationFailure.class, () -> weights.prepareBaseModel(request(broken, null)));
    assertTrue(f.isNonRetryable());
    assertTrue(f.getOriginalMessage().contains("no tokenizer.json"), f.getOriginalMessage());

    // the weights replaced after the run started: the next activity refuses, naming model.path
    Path moving = copy(fixture("qwen2"), tmp.resolve("moving"));
    String base = weights.prepareBaseModel(request(moving, null));
    Files.copy(fixture("qwen3").resolve("config.json"), moving.resolve("config.json"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    f = assertThrows(ApplicationFailure.class,
        () -> HfPolicy.loadForTraining(runtime.store(), base));
    assertTrue(f.isNonRetryable());
    assertTrue(f.getOriginalMessage().startsWith("model.path: "), f.getOriginalMessage());
  }

  /**
   * model.name: the machine's model cache (fetched there first if missing; CI fetches it before
   * the tests), recorded in the base as the directory it resolved to. An unknown name fails the run
   * for good, naming the known ones.
   */
  @Test
  void aModelByNameIsItsCacheDirectory() throws Exception {
    var known = whale.model.gguf.ModelFetcher.known("smollm2-135m-instruct");
    Path dir = HfPolicy.modelDirectory(ExperimentSpec.ModelSpec.ofKnown(known.name()), System.out);
    assertEquals(whale.model.gguf.ModelFetcher.cacheRoot(null).resolve(known.name()), dir);
    assertTrue(whale.model.gguf.ModelFetcher.complete(known, dir));
    var spec = new ExperimentSpec(null, null, 3L, null, null,
        ExperimentSpec.ModelSpec.ofKnown(known.name()), null, null, null, null, null, null, null, null);
    assertEquals(List.of(), SpecValidator.problems(spec));
    String ref = weights.prepareBaseModel(BaseModelRequest.of(spec, TASK, 11));
    assertEquals(dir.toString(), runtime.store().getJson(ref, HfPolicy.Base.class).path());
    ApplicationFailure f = assertThrows(ApplicationFailure.class, () -> weights.prepareBaseModel(
        new BaseModelRequest(TASK, ExperimentSpec.ModelSpec.ofKnown("gpt-9"), 1, Finetune.LORA,
            null)));
    assertTrue(f.isNonRetryable());
    assertTrue(f.getOriginalMessage().contains("model.name: unknown model \"gpt-9\"; known: "
        + "smollm2-135m-instruct"), f.getOriginalMessage());
  }
}
