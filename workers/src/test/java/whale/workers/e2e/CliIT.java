package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code temporal} CLI as whale's users drive it: the real dev server, the four workers as
 * separate {@code whale worker} JVMs, and {@code temporal workflow start/signal/query/describe/
 * result/list} against them.
 */
class CliIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static Path dir;
  static DevServer server;
  static Workers workers;

  @BeforeAll
  static void up() throws Exception {
    dir = E2e.outputDir("cli");
    server = DevServer.start(dir, false);
    workers = Workers.start(server.address(), dir.resolve("artifacts"), dir);
  }

  @AfterAll
  static void down() {
    if (workers != null) {
      workers.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static String cli(String... args) {
    return Temporal.cli(server.address(), args).ok();
  }

  static JsonNode status(String address, String id) throws Exception {
    String out = Temporal.cli(address, "workflow", "query", "--workflow-id", id,
        "--name", "status", "-o", "json").ok();
    return JSON.readTree(out).get("queryResult").get(0);
  }

  private static JsonNode waitStatus(String id, Predicate<JsonNode> p) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    JsonNode s = null;
    while (System.nanoTime() < deadline) {
      s = status(server.address(), id);
      if (p.test(s)) {
        return s;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("status never matched; last: " + s);
  }

  /** The search attributes of {@code temporal workflow describe -o json}, decoded. */
  static Map<String, JsonNode> searchAttributes(String address, String id) throws Exception {
    JsonNode d = JSON.readTree(Temporal.cli(address, "workflow", "describe", "--workflow-id", id,
        "-o", "json").ok());
    Map<String, JsonNode> out = new HashMap<>();
    d.get("workflowExecutionInfo").get("searchAttributes").get("indexedFields").fields()
        .forEachRemaining(e -> {
          try {
            out.put(e.getKey(), JSON.readTree(Base64.getDecoder().decode(
                e.getValue().get("data").asText())));
          } catch (java.io.IOException ex) {
            throw new IllegalStateException(ex);
          }
        });
    return out;
  }

  @Test
  void startPauseQueryForceSwitchResumeDescribeAndResultThroughTheCli() throws Exception {
    String id = "cli-run";
    String started = cli("workflow", "start", "--type", "WhaleWorkflow",
        "--task-queue", "whale-control", "--workflow-id", id, "--input-file",
        E2e.tinySpec().toString());
    assertTrue(started.contains(id), started);
    // pausing right away: the base model takes seconds, so the run holds before its first step
    cli("workflow", "signal", "--workflow-id", id, "--name", "pause");
    JsonNode held = waitStatus(id, s -> s.get("phase").asText().equals("weight")
        && s.get("paused").asBoolean());
    assertEquals(0, held.get("step").asInt());
    Thread.sleep(2000);
    JsonNode still = status(server.address(), id);
    assertEquals(0, still.get("step").asInt(), "no RSFT step may run while paused");
    assertTrue(still.get("paused").asBoolean());
    assertEquals("weight", searchAttributes(server.address(), id).get("WhalePhase").asText());

    // forcePhaseSwitch then resume: round 1 ends after a single RSFT step
    cli("workflow", "signal", "--workflow-id", id, "--name", "forcePhaseSwitch");
    cli("workflow", "signal", "--workflow-id", id, "--name", "resume");
    assertFalse(status(server.address(), id).get("paused").asBoolean());

    JsonNode result = JSON.readTree(cli("workflow", "result", "--workflow-id", id, "-o", "json"));
    assertEquals("COMPLETED", result.get("status").asText(), result.toString());
    JsonNode r = result.get("closeEvent").get("workflowExecutionCompletedEventAttributes")
        .get("result").get(0);
    assertEquals("e2e-tiny", r.get("name").asText());
    // budget 4 steps: 1 (cut by the signal) + 2 + 1 -> three rounds
    assertEquals(4, r.get("steps").asInt());
    assertEquals(3, r.get("rounds").asInt());
    int firstWeightEvalStep = -1;
    for (JsonNode e : r.get("evaluations")) {
      if (e.get("phase").asText().equals("weight")) {
        firstWeightEvalStep = e.get("step").asInt();
        break;
      }
    }
    assertEquals(1, firstWeightEvalStep, "the forced switch ends round 1 after one step");

    Map<String, JsonNode> sa = searchAttributes(server.address(), id);
    assertEquals("done", sa.get("WhalePhase").asText());
    assertEquals(r.get("rounds").asLong(), sa.get("WhaleRound").asLong());
    assertEquals(r.get("rollouts").asLong(), sa.get("WhaleRollouts").asLong());
    assertEquals(r.get("bestMeanAt8").asDouble(), sa.get("WhaleBestMeanAt8").asDouble(), 1e-12);

    // the human-readable describe shows them too, and the visibility store can be queried by them
    String describe = cli("workflow", "describe", "--workflow-id", id);
    for (String k : new String[] {"WhalePhase", "WhaleRound", "WhaleBestMeanAt8",
        "WhaleRollouts"}) {
      assertTrue(describe.contains(k), describe);
    }
    JsonNode status = status(server.address(), id);
    assertEquals("done", status.get("phase").asText());
    assertEquals(r.get("checkpointRef").asText(), status.get("checkpointRef").asText());
    String listed = waitFor(() -> cli("workflow", "list", "--query",
        "WhalePhase = 'done' AND WhaleRound = 3", "-o", "json"), s -> s.contains(id));
    assertTrue(listed.contains(id), listed);
  }

  @Test
  void anInvalidSpecFailsTheRunBeforeAnyActivity() throws Exception {
    String id = "cli-invalid";
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, "{\"rsft\": {\"learningRate\": 5.0}}");
    cli("workflow", "start", "--type", "WhaleWorkflow", "--task-queue", "whale-control",
        "--workflow-id", id, "--input-file", bad.toString());
    Temporal.Result res = Temporal.cli(server.address(), "workflow", "result", "--workflow-id", id,
        "-o", "json");
    JsonNode result = JSON.readTree(res.out());
    assertEquals("FAILED", result.get("status").asText(), res.out() + res.err());
    assertTrue(res.out().contains("InvalidSpec"), res.out());
    assertTrue(res.out().contains("rsft.learningRate"), res.out());
    String history = cli("workflow", "show", "--workflow-id", id, "-o", "json");
    assertFalse(history.contains("ACTIVITY_TASK_SCHEDULED"), "no activity may run");
  }

  static String waitFor(java.util.function.Supplier<String> s, Predicate<String> p)
      throws InterruptedException {
    String last = null;
    for (int i = 0; i < 50; i++) {
      last = s.get();
      if (p.test(last)) {
        return last;
      }
      Thread.sleep(200);
    }
    return last;
  }
}
