package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * An API key in the worker's environment (planted by the workers pom as WHALE_TEST_PLANTED_KEY) is
 * sent to the openai proposer's and the LLM judge's servers and nowhere else: not into any workflow
 * history, artifact (archive files, traces, memos) or log line, even when the server echoes it back
 * in an error or in its answer, as real APIs do ("Incorrect API key provided: sk-...").
 */
class PlantedKeyTest {
  static final String ENV = "WHALE_TEST_PLANTED_KEY";
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path artifacts;
  static ActivityRuntime runtime;

  @RegisterExtension
  static final TestWorkflowExtension temporal = WhaleTestServer.extension();

  @BeforeAll
  static void openRuntime() {
    runtime = ActivityRuntime.open(artifacts);
  }

  @BeforeEach
  void startWorkers(TestWorkflowEnvironment env) {
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
    env.start();
  }

  /** A chat-completions reply whose content is {@code content}. */
  private static byte[] reply(String content) throws Exception {
    ObjectNode resp = JSON.createObjectNode();
    resp.putArray("choices").addObject().putObject("message").put("role", "assistant")
        .put("content", content);
    return JSON.writeValueAsBytes(resp);
  }

  @Test
  void aPlantedKeyReachesNoHistoryArtifactOrLogLine(WorkflowClient client) throws Exception {
    String key = System.getenv(ENV);
    assertTrue(key != null && key.length() >= 20, "the workers pom plants " + ENV);
    List<String> proposerAuth = new ArrayList<>();
    List<String> judgeAuth = new ArrayList<>();
    AtomicInteger proposerCalls = new AtomicInteger();
    AtomicInteger judgeCalls = new AtomicInteger();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/chat/completions", ex -> {
      try {
        JsonNode req = JSON.readTree(ex.getRequestBody());
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        int status = 200;
        byte[] body;
        if (req.path("model").asText().equals("judge")) {
          synchronized (judgeAuth) {
            judgeAuth.add(auth);
          }
          if (judgeCalls.incrementAndGet() == 1) {
            status = 401; // the first verdict fails, echoing the key like real APIs do
            body = ("{\"error\": {\"message\": \"Incorrect API key provided: " + key + "\"}}").getBytes();
          } else {
            body = reply(judgeCalls.get() % 2 == 0 ? "yes (key " + key + ")" : "no");
          }
        } else {
          synchronized (proposerAuth) {
            proposerAuth.add(auth);
          }
          if (proposerCalls.incrementAndGet() == 1) {
            status = 500;
            body = ("upstream failed for Authorization: Bearer " + key).getBytes();
          } else {
            ObjectNode cands = JSON.createObjectNode();
            cands.putArray("candidates").addObject().put("name", "echo-" + key)
                .put("hypothesis", "your key is " + key).put("changes", key).put("axis", "prompt")
                .put("source", "// " + key + "\npublic final class Broken { String k = \"" + key + "\"; }");
            body = reply("```json\n" + cands + "\n```");
          }
        }
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream o = ex.getResponseBody()) {
          o.write(body);
        }
      } catch (Exception e) {
        ex.sendResponseHeaders(599, -1);
      }
    });
    server.start();
    String base = "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    ExperimentSpec spec = SpecJson.parse("""
        {
          "name": "planted", "task": "searchqa", "schedule": "whale", "seed": 7,
          "data": { "weightProblems": 32, "harnessProblems": 8, "testProblems": 8,
                    "judge": { "baseUrl": "%s", "model": "judge", "apiKeyEnv": "%s" } },
          "model": { "dModel": 32, "layers": 1, "heads": 2, "pretrainSteps": 30,
                     "pretrainBatch": 32, "pretrainDocuments": 1000 },
          "rsft": { "promptsPerStep": 8, "samplesPerPrompt": 2, "minibatch": 32 },
          "phases": { "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2,
                      "weightBudgetEpochs": 1.0 },
          "harness": { "proposer": "openai", "openaiBaseUrl": "%s", "openaiModel": "proposer",
                       "openaiApiKeyEnv": "%s", "candidatesPerIteration": 1 },
          "eval": { "k": 2, "everyEpochs": 0 }
        }
        """.formatted(base, ENV, base, ENV));

    ByteArrayOutputStream logs = new ByteArrayOutputStream();
    PrintStream out = System.out;
    PrintStream err = System.err;
    System.setOut(new PrintStream(new Tee(out, logs), true));
    System.setErr(new PrintStream(new Tee(err, logs), true));
    WhaleResult r;
    try {
      r = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
          .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId("planted")
          .setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build()).run(spec, null);
    } finally {
      System.setOut(out);
      System.setErr(err);
      server.stop(0);
    }

    // the key was really used: every request to both servers carried it, and both failed once
    assertTrue(proposerCalls.get() >= 2 && judgeCalls.get() >= 2, proposerCalls + " / " + judgeCalls);
    assertTrue(proposerAuth.stream().allMatch(("Bearer " + key)::equals), proposerAuth.toString());
    assertTrue(judgeAuth.stream().allMatch(("Bearer " + key)::equals));
    assertEquals(4, r.steps(), "32 problems, 8 per step, a budget of 1 epoch");

    byte[] needle = key.getBytes(StandardCharsets.UTF_8);
    List<String> ids = new ArrayList<>(List.of("planted"));
    for (int round = 1; round <= r.rounds(); round++) {
      ids.add("planted/r" + round + "-weight");
      if (round < r.rounds()) {
        ids.add("planted/r" + round + "-harness");
      }
    }
    boolean sawEcho = false;
    for (String id : ids) {
      WorkflowExecutionHistory h = client.fetchHistory(id);
      // payloads are raw bytes in the proto (base64 in its JSON form): search both
      byte[] proto = h.getHistory().toByteArray();
      assertFalse(contains(proto, needle), "the key is in the history of " + id);
      String json = h.toJson(true);
      assertFalse(json.contains(key), "the key is in the history JSON of " + id);
      sawEcho |= contains(proto, "[redacted]".getBytes(StandardCharsets.UTF_8));
    }
    assertTrue(sawEcho, "the echoed candidate reached the histories, redacted");
    try (Stream<Path> files = Files.walk(artifacts)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        assertFalse(contains(Files.readAllBytes(f), needle), "the key is in " + artifacts.relativize(f));
      }
    }
    String logged = logs.toString(StandardCharsets.UTF_8);
    assertFalse(logged.contains(key), "the key is in a log line");
    assertTrue(logged.contains("LLM judge: HTTP 401: {\"error\": {\"message\": \"Incorrect API key provided: [redacted]\"}}")
        && logged.contains("openai proposer: HTTP 500: upstream failed for Authorization: Bearer [redacted]"),
        "both failures were logged, redacted");
  }

  private static boolean contains(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  /** Writes to the console and keeps a copy. */
  private static final class Tee extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    Tee(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public void write(int c) throws java.io.IOException {
      a.write(c);
      synchronized (b) {
        b.write(c);
      }
    }

    @Override
    public void write(byte[] buf, int off, int len) throws java.io.IOException {
      a.write(buf, off, len);
      synchronized (b) {
        b.write(buf, off, len);
      }
    }
  }
}
