package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.activities.VllmRollouts;
import whale.model.gguf.ModelFetcher;
import whale.model.vllm.VllmServer;
import whale.workflows.RunEvent;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * A WHALE run on the real SmolLM2-135M-Instruct with {@code rollouts.backend: vllm}: the worker
 * starts and supervises a real vLLM server ({@code whale worker --vllm-serve} does the same), every
 * episode's model calls, from the sandboxed harnesses of RSFT steps, harness scoring and test
 * evaluations, go from the worker to that server, and each RSFT step's LoRA adapter is handed to
 * it and probed before it is sampled.
 */
class VllmRunTest {
  @TempDir static Path tmp;
  static ActivityRuntime runtime;
  static VllmServer server;

  @RegisterExtension
  static final TestWorkflowExtension temporal = WhaleTestServer.extension();

  @BeforeAll
  static void startServer() throws IOException {
    Path model;
    try {
      model = ModelFetcher.path(ModelFetcher.known("smollm2-135m-instruct"), ModelFetcher.cacheRoot(null));
    } catch (IOException e) {
      fail("this test needs the real model: " + e.getMessage());
      return;
    }
    server = VllmServer.start(VllmServer.Settings.cpu(VllmServer.defaultExecutable(), model,
        "smollm2", tmp.resolve("vllm.log")));
    runtime = ActivityRuntime.open(tmp.resolve("artifacts"));
    runtime.vllm(VllmRollouts.managed(server));
  }

  @AfterAll
  static void stopServer() {
    if (runtime != null) {
      runtime.vllm().close();
    }
  }

  @BeforeEach
  void startWorkers(TestWorkflowEnvironment env) {
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
    env.start();
  }

  @Test
  void aLoraRunSamplesEveryEpisodeOnVllmWithEachAdapterProbed(WorkflowClient client) {
    var spec = SpecJson.parse("""
        {
          "name": "vllm-lora", "task": "searchqa", "seed": 7,
          "data": { "weightProblems": 16, "harnessProblems": 4, "testProblems": 8 },
          "model": { "source": "huggingface", "name": "smollm2-135m-instruct" },
          "rsft": { "promptsPerStep": 8, "samplesPerPrompt": 4, "minibatch": 16, "learningRate": 0.001,
                    "finetune": "lora", "lora": { "rank": 8, "alpha": 16, "targets": ["q_proj", "v_proj"] } },
          "phases": { "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 1, "weightBudgetEpochs": 1.0 },
          "harness": { "candidatesPerIteration": 1 },
          "eval": { "k": 2, "everyEpochs": 0 },
          "rollouts": { "backend": "vllm", "maxConcurrentRequests": 8 }
        }
        """);
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId("vllm-lora")
        .setWorkflowExecutionTimeout(Duration.ofMinutes(15)).build());
    long t0 = System.nanoTime();
    WhaleResult r = wf.run(spec, null);
    long[] re = runtime.vllm().retokenization();
    System.out.printf("vLLM WHALE run: %d steps, base mean@2 %.3f, best %.3f, %d training + %d test rollouts, "
        + "%d model calls on vLLM (%d re-tokenize to other ids), worst probe %.2e nats, %.1f s%n", r.steps(),
        r.baseMeanAt8(), r.bestMeanAt8(), r.rollouts(), r.testRollouts(), re[1], re[0],
        runtime.vllm().worstProbe(), (System.nanoTime() - t0) / 1e9);
    assertEquals(2, r.steps());
    // every RSFT rollout made at least one model call there (test evaluations of an unchanged
    // checkpoint and harness are memoized, so they need not add calls of their own)
    assertTrue(re[1] >= r.rollouts(), re[1] + " calls on vLLM for " + r.rollouts() + " training rollouts");
    assertTrue(runtime.vllm().worstProbe() <= 0.01, "probe " + runtime.vllm().worstProbe());
    // the steps' LoRA adapters went to the server under their content names
    List<RunEvent> steps = wf.history().stream().filter(e -> e.kind().equals("rsft-step")).toList();
    List<String> served = server.client().models().stream().map(m -> m.id()).toList();
    assertTrue(steps.stream().anyMatch(s -> s.accepted() > 0), "some rollouts were accepted: " + steps);
    String last = r.checkpointRef();
    if (!last.equals(r.evaluations().get(0).checkpointRef())) {
      assertTrue(served.contains(VllmRollouts.adapterName(last)),
          "the last checkpoint's adapter is on the server: " + served);
    }
  }
}
