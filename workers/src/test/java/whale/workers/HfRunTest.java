package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDManager;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.activities.HfPolicy;
import whale.model.GenerationRequest;
import whale.model.SamplingParams;
import whale.model.SftExample;
import whale.model.hf.HfCheckpoint;
import whale.model.hf.HfExport;
import whale.model.hf.HfModel;
import whale.model.hf.LoraAdapters;
import whale.task.math.MathTask;
import whale.workflows.RunEvent;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * Bring your own model, end to end: a WHALE run whose policy is a Hugging Face qwen2 directory,
 * fine-tuned with LoRA by RSFT through the real workflow, activities and sandboxed harness
 * episodes; its step checkpoint exported as a PEFT adapter and as a merged model, both reloaded.
 */
class HfRunTest {
  /** The test fixture of activities: a random 2-layer, 64-wide qwen2 with a 384-token BPE. */
  static final Path QWEN2 = Path.of("../activities/src/test/resources/hf/qwen2").toAbsolutePath()
      .normalize();

  @TempDir static Path tmp;
  static ActivityRuntime runtime;
  static Path base;

  @RegisterExtension
  static final TestWorkflowExtension temporal = WhaleTestServer.extension();

  /**
   * The "pretrained" model a user brings: the random fixture, fully fine-tuned briefly on the math
   * task's one-step "Q: ...\nA: n" documents (the builtin model's pretraining corpus), so that
   * its answers are sometimes right and RSFT has rollouts to accept.
   */
  @BeforeAll
  static void prepare() throws Exception {
    runtime = ActivityRuntime.open(tmp.resolve("artifacts"));
    base = tmp.resolve("qwen2-math");
    List<SftExample> docs = new ArrayList<>();
    for (String d : new MathTask(1234, 32, 4, 4).pretrainingCorpus(5, 2000)) {
      int at = d.indexOf("\nA:");
      if (d.startsWith("Q: ") && at > 0) {
        docs.add(new SftExample(d.substring(0, at + 3), d.substring(at + 3)));
      }
    }
    try (HfModel m = HfModel.load(QWEN2, HfModel.LINE)) {
      m.trainFull();
      for (int epoch = 0; epoch < 3; epoch++) {
        m.sft(docs, 32, 3e-3f, epoch);
      }
      HfExport.exportModel(m.decoder(), QWEN2, base, false);
    }
  }

  @BeforeEach
  void startWorkers(TestWorkflowEnvironment env) {
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
    env.start();
  }

  @Test
  void loraRunOnAHuggingFaceModelCompletesAndItsCheckpointExports(WorkflowClient client)
      throws Exception {
    var spec = SpecJson.parse("""
        {
          "name": "hf-lora",
          "seed": 7,
          "data": { "weightProblems": 16, "harnessProblems": 4, "testProblems": 4 },
          "model": { "source": "huggingface", "path": "%s" },
          "rsft": { "promptsPerStep": 8, "samplesPerPrompt": 4, "minibatch": 16,
                    "learningRate": 0.002, "finetune": "lora",
                    "lora": { "rank": 4, "alpha": 8, "targets": ["q_proj", "v_proj", "o_proj"] } },
          "phases": { "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 1,
                      "weightBudgetEpochs": 1.0 },
          "harness": { "candidatesPerIteration": 1 },
          "eval": { "k": 2, "everyEpochs": 0 }
        }
        """.formatted(base.toString().replace("\\", "\\\\")));
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId("hf-lora")
        .setWorkflowExecutionTimeout(Duration.ofMinutes(5)).build());
    WhaleResult r = wf.run(spec, null);
    assertEquals(2, r.steps());

    List<RunEvent> steps = wf.history().stream().filter(e -> e.kind().equals("rsft-step")).toList();
    String baseRef = r.evaluations().get(0).checkpointRef();
    assertEquals(base.toString(), HfPolicy.baseDir(runtime.store(), baseRef).toString());
    List<RunEvent> trained = steps.stream().filter(e -> e.accepted() > 0).toList();
    assertFalse(trained.isEmpty(), "some rollouts were accepted: " + steps);
    String ckpt = r.checkpointRef();
    assertNotEquals(baseRef, ckpt);
    assertTrue(HfPolicy.isHf(runtime.store(), ckpt));

    // the step's checkpoint is LoRA: a PEFT adapter of the chosen rank and targets, no weights
    Path dir = HfPolicy.checkpointDir(runtime.store(), ckpt);
    String meta = Files.readString(dir.resolve(HfCheckpoint.META));
    assertTrue(meta.contains("\"finetune\" : \"lora\""), meta);
    assertTrue(Files.exists(dir.resolve(LoraAdapters.WEIGHTS)));
    assertFalse(Files.exists(dir.resolve("model.safetensors")));
    String adapterConfig = Files.readString(dir.resolve(LoraAdapters.CONFIG));
    assertTrue(adapterConfig.contains("\"r\" : 4"), adapterConfig);
    assertTrue(adapterConfig.contains("\"o_proj\""), adapterConfig);

    // export: the PEFT directory, and the merged model; the merged model samples exactly as the
    // checkpoint (base + adapters) does, and differs from the base (the adapters learned)
    Path peft = tmp.resolve("peft");
    Path merged = tmp.resolve("merged");
    String store = runtime.store().root().toString();
    assertEquals("exported " + ckpt + " to " + peft + "\n",
        HfCliTest.ok("export", ckpt, "--out", peft.toString(), "--artifacts", store));
    HfCliTest.ok("export", ckpt, "--out", merged.toString(), "--merge", "--artifacts", store);
    assertTrue(HfCliTest.fails("export", ckpt, "--out", merged.toString(), "--artifacts", store)
        .contains("--out: " + merged + " exists and is not an empty directory"));
    assertTrue(HfCliTest.fails("export", baseRef, "--out", tmp.resolve("x").toString(),
        "--artifacts", store).contains("it is a run's base"));
    // whale generate on the reference applies the adapters: as the merged directory
    String prompt = "Q: What is 3 + 4?\nA:";
    assertEquals(HfCliTest.ok("generate", "--model", merged.toString(), "--prompt", prompt,
            "--max-new-tokens", "8", "--json"),
        HfCliTest.ok("generate", "--model", ckpt, "--prompt", prompt, "--max-new-tokens", "8",
            "--json", "--artifacts", store));
    assertTrue(Files.exists(peft.resolve(LoraAdapters.CONFIG)));
    assertTrue(Files.exists(peft.resolve(LoraAdapters.WEIGHTS)));
    assertFalse(Files.exists(peft.resolve(HfCheckpoint.OPTIMIZER)));
    List<GenerationRequest> prompts = List.of(new GenerationRequest("Q: What is 3 + 4?\nA:", 1, 6),
        new GenerationRequest("Q: What is 12 - 5?\nA:", 2, 6));
    SamplingParams greedy = SamplingParams.GREEDY;
    List<String> fromCheckpoint;
    try (HfModel m = HfPolicy.open(runtime.store(), ckpt)) {
      fromCheckpoint = texts(m, prompts, greedy);
      float[] b = m.decoder().adapters().values().iterator().next().b().toFloatArray();
      assertTrue(maxAbs(b) > 0, "LoRA B starts at zero and RSFT moved it");
    }
    try (HfModel m = HfModel.load(merged, HfModel.LINE)) {
      assertEquals(fromCheckpoint, texts(m, prompts, greedy));
    }
    // the PEFT directory reloads onto the base as peft would load it
    try (NDManager adapters = NDManager.newBaseManager();
        HfModel m = HfModel.load(base, HfModel.LINE)) {
      LoraAdapters.load(m.decoder(), adapters, peft);
      assertEquals(fromCheckpoint, texts(m, prompts, greedy));
    }
  }

  /** A spec started without the CLI (temporal workflow start): the first activity refuses it. */
  @Test
  void aMissingModelDirectoryFailsTheRunForGoodNamingModelPath(WorkflowClient client) {
    Path missing = tmp.resolve("not-there");
    var spec = SpecJson.parse("{\"model\": {\"source\": \"huggingface\", \"path\": \""
        + missing.toString().replace("\\", "\\\\") + "\"}}");
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId("hf-missing")
        .setWorkflowExecutionTimeout(Duration.ofMinutes(1)).build());
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> wf.run(spec, null));
    Throwable t = e;
    while (!(t instanceof ApplicationFailure) && t.getCause() != null) {
      t = t.getCause(); // workflow failure <- activity failure <- the activity's ApplicationFailure
    }
    ApplicationFailure f = assertInstanceOf(ApplicationFailure.class, t);
    assertTrue(f.isNonRetryable());
    assertEquals("InvalidModel", f.getType());
    assertTrue(f.getOriginalMessage().startsWith("model.path: " + missing + " is not a directory"),
        f.getOriginalMessage());
  }

  private static List<String> texts(HfModel m, List<GenerationRequest> prompts, SamplingParams p) {
    return m.generate(prompts, p).stream().map(c -> c.text()).toList();
  }

  private static double maxAbs(float[] a) {
    double max = 0;
    for (float x : a) {
      max = Math.max(max, Math.abs(x));
    }
    return max;
  }
}
