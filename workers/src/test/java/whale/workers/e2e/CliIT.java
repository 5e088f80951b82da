package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
 * separate {@code whale worker} JVMs, and {@code temporal workflow start/signal/update/query/
 * describe/result/list} against them.
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

  /** {@code temporal workflow update execute --workflow-id ID --name NAME [MORE...]}, rc not checked. */
  private static Temporal.Result update(String id, String name, String... more) {
    java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("workflow", "update",
        "execute", "--workflow-id", id, "--name", name, "-o", "json"));
    args.addAll(java.util.List.of(more));
    return Temporal.cli(server.address(), args.toArray(String[]::new));
  }

  /** A rejected update: the CLI exits non-zero and prints the validator's message. */
  private static void assertRejected(Temporal.Result r, String message) {
    assertNotEquals(0, r.rc(), "the update must be rejected: " + r.out() + r.err());
    assertTrue((r.out() + r.err()).contains(message),
        "expected the validator's message \"" + message + "\", got: " + r.out() + r.err());
  }

  /** An accepted update's result (the CLI's {@code -o json} answer). */
  private static String accepted(Temporal.Result r) throws Exception {
    assertEquals(0, r.rc(), "the update must be accepted: " + r.out() + r.err());
    return JSON.readTree(r.out()).get("result").asText();
  }

  /**
   * The tiny spec with harness phases of 3 iterations whose proposals wait for {@code gate}
   * ({@link E2e#gatedProposer}): the run holds at round 1's harness phase, proposing iteration 2.
   */
  private static Path gatedSpec(Path gate) throws Exception {
    com.fasterxml.jackson.databind.node.ObjectNode spec =
        (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(E2e.tinySpec().toFile());
    ((com.fasterxml.jackson.databind.node.ObjectNode) spec.get("phases"))
        .put("harnessIterationsPerPhase", 3);
    com.fasterxml.jackson.databind.node.ObjectNode h =
        (com.fasterxml.jackson.databind.node.ObjectNode) spec.get("harness");
    h.put("proposer", "command");
    E2e.gatedProposer(dir, gate).forEach(h.putArray("command")::add);
    Path out = dir.resolve("gated.json");
    Files.writeString(out, JSON.writeValueAsString(spec));
    return out;
  }

  /** The status without its record of ignored signals (what a malformed payload may add to). */
  private static JsonNode withoutRejections(JsonNode status) {
    com.fasterxml.jackson.databind.node.ObjectNode copy =
        (com.fasterxml.jackson.databind.node.ObjectNode) status.deepCopy();
    copy.remove("rejected");
    return copy;
  }

  @Test
  void startPauseQueryUpdatesForceSwitchResumeDescribeAndResultThroughTheCli() throws Exception {
    String id = "cli-run";
    Path gate = dir.resolve("proposal-gate");
    // --input-file passes the spec alone: the one-argument start of run(spec, resume), which the
    // SDK completes with resume = null
    String started = cli("workflow", "start", "--type", "WhaleWorkflow",
        "--task-queue", "whale-control", "--workflow-id", id, "--input-file",
        gatedSpec(gate).toString());
    assertTrue(started.contains(id), started);
    // pausing right away: the run still pretrains the base model, writes h0 and evaluates both,
    // then holds in phase "base" before it starts the first weight phase
    cli("workflow", "signal", "--workflow-id", id, "--name", "pause");
    JsonNode held = waitStatus(id, s -> s.get("phase").asText().equals("base")
        && s.get("paused").asBoolean() && s.get("bestMeanAt8").isNumber());
    assertEquals(0, held.get("step").asInt());
    assertTrue(held.get("phaseWorkflowId").isNull(), held.toString());
    Thread.sleep(2000);
    JsonNode still = status(server.address(), id);
    assertEquals(0, still.get("step").asInt(), "no RSFT step may run while paused");
    assertTrue(still.get("paused").asBoolean());
    assertEquals("base", still.get("phase").asText());
    assertTrue(still.get("phaseWorkflowId").isNull(), "no phase starts while paused: " + still);
    assertEquals("base", searchAttributes(server.address(), id).get("WhalePhase").asText());
    String noChild = cli("workflow", "list", "--query", "ParentWorkflowId = '" + id + "'",
        "-o", "json");
    assertFalse(noChild.contains(id + "/r"), "no phase child before resume: " + noChild);

    // updates while paused: a switch is rejected, and so are an empty or inapplicable adjustment;
    // a rejected update leaves no trace, an accepted one answers with the new limits
    assertRejected(update(id, "switchPhase"),
        "the run is paused: resume it before switching phases");
    assertRejected(update(id, "adjust", "--input", "{}"),
        "nothing to change: set weightBudgetEpochs, patienceEpochs, harnessPatience or "
            + "harnessMaxIterations");
    assertRejected(update(id, "adjust", "--input", "{\"patienceEpochs\": 0.5}"),
        "patienceEpochs: schedule whale has no patience rule");
    // malformed payloads, each refused by name; the run is held, so nothing else may change
    int sent = 0;
    for (var bad : whale.workers.BadPayloads.UPDATES.entrySet()) {
      assertRejected(update(id, "adjust", "--input", bad.getKey()), bad.getValue());
      sent++;
    }
    for (String bad : whale.workers.BadPayloads.SIGNALS.keySet()) {
      cli("workflow", "signal", "--workflow-id", id, "--name", "phaseProgress", "--input", bad);
      sent++;
    }
    JsonNode ignored = waitStatus(id, s -> s.get("rejected").size() == whale.workers.BadPayloads.SIGNALS.size());
    int i = 0;
    for (String why : whale.workers.BadPayloads.SIGNALS.values()) {
      String line = ignored.get("rejected").get(i++).asText();
      assertTrue(line.startsWith("signal phaseProgress ignored: ") && line.contains(why), line + " vs " + why);
    }
    assertEquals(withoutRejections(still), withoutRejections(ignored), "the held run is unchanged");
    assertTrue(sent >= 20, sent + " malformed payloads");
    String adjusted = accepted(update(id, "adjust", "--input", "{\"weightBudgetEpochs\": 1.5}"));
    assertTrue(adjusted.startsWith("weight budget 6 steps (1.50 epochs, 0 done)"), adjusted);
    assertEquals(6, status(server.address(), id).get("budgetSteps").asInt());

    // forcePhaseSwitch then resume: round 1 ends after a single RSFT step
    cli("workflow", "signal", "--workflow-id", id, "--name", "forcePhaseSwitch");
    cli("workflow", "signal", "--workflow-id", id, "--name", "resume");
    assertFalse(status(server.address(), id).get("paused").asBoolean());

    // switchPhase while a phase runs: accepted. The run is held at a known point, round 1's
    // harness phase proposing iteration 2 (the proposer waits for the gate), so the switch lands
    // there whatever the machine's speed: check, switch, release.
    E2e.waitForFile(Path.of(gate + ".waiting"));
    JsonNode holding = status(server.address(), id);
    assertEquals("harness", holding.get("phase").asText(), holding.toString());
    assertEquals(1, holding.get("round").asInt(), holding.toString());
    assertEquals(1, holding.get("harnessIteration").asInt(), "iteration 1 re-scored h0: " + holding);
    assertEquals(id + "/r1-harness", holding.get("phaseWorkflowId").asText());
    assertEquals("the harness phase of round 1 ends after its current iteration",
        accepted(update(id, "switchPhase")));
    assertRejected(update(id, "switchPhase"), "a switch of this harness phase is already pending");
    Files.createFile(gate);
    JsonNode harness1 = JSON.readTree(cli("workflow", "result", "--workflow-id", id + "/r1-harness",
        "-o", "json")).get("closeEvent").get("workflowExecutionCompletedEventAttributes")
        .get("result").get(0);
    assertEquals("switch", harness1.get("endedBy").asText(), harness1.toString());
    assertEquals(2, harness1.get("iterations").asInt(), "iteration 2 finished, iteration 3 never ran");
    // a budget below the steps already done is rejected, naming them
    JsonNode spent = waitStatus(id, s -> s.get("step").asInt() >= 2);
    assertRejected(update(id, "adjust", "--input", "{\"weightBudgetEpochs\": 0.25}"),
        "weightBudgetEpochs: 0.25 epochs is 1 steps, below the ");
    assertFalse(spent.get("phase").asText().equals("done"), spent.toString());

    JsonNode result = JSON.readTree(cli("workflow", "result", "--workflow-id", id, "-o", "json"));
    assertEquals("COMPLETED", result.get("status").asText(), result.toString());
    JsonNode r = result.get("closeEvent").get("workflowExecutionCompletedEventAttributes")
        .get("result").get(0);
    assertEquals("e2e-tiny", r.get("name").asText());
    // the adjusted budget of 6 steps: 1 (cut by the signal) + 2 + 2 + 1 -> four rounds
    assertEquals(6, r.get("steps").asInt(), "the adjusted budget: " + r);
    assertEquals(4, r.get("rounds").asInt(), r.toString());
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
    assertTrue(status.get("phaseWorkflowId").isNull(), status.toString());
    assertEquals(r.get("checkpointRef").asText(), status.get("checkpointRef").asText());
    String listed = waitFor(() -> cli("workflow", "list", "--query",
        "WhalePhase = 'done' AND WhaleRound = 4", "-o", "json"), s -> s.contains(id));
    assertTrue(listed.contains(id), listed);

    // the run's structure, as the Web UI lists it: one child workflow per phase, by type
    Map<String, String> expected = new java.util.TreeMap<>();
    for (int round = 1; round <= 4; round++) {
      expected.put(id + "/r" + round + "-weight", "WeightPhaseWorkflow");
      if (round < 4) {
        expected.put(id + "/r" + round + "-harness", "HarnessSearchWorkflow");
      }
    }
    Map<String, String> children = new java.util.TreeMap<>();
    String listedChildren = waitFor(() -> cli("workflow", "list", "--query",
        "ParentWorkflowId = '" + id + "'", "-o", "json"),
        s -> s.contains(id + "/r4-weight") && !s.contains("WORKFLOW_EXECUTION_STATUS_RUNNING"));
    for (JsonNode w : JSON.readTree(listedChildren)) {
      assertEquals(id, w.get("parentExecution").get("workflowId").asText(), w.toString());
      assertEquals("WORKFLOW_EXECUTION_STATUS_COMPLETED", w.get("status").asText(), w.toString());
      children.put(w.get("execution").get("workflowId").asText(), w.get("type").get("name").asText());
    }
    assertEquals(expected, children, "one child workflow per phase");
    for (int round = 2; round <= 3; round++) {
      JsonNode h = JSON.readTree(cli("workflow", "result", "--workflow-id", id + "/r" + round + "-harness",
          "-o", "json")).get("closeEvent").get("workflowExecutionCompletedEventAttributes")
          .get("result").get(0);
      assertEquals("length", h.get("endedBy").asText(), "unswitched: " + h.get("endedBy"));
      assertEquals(3, h.get("iterations").asInt());
    }
    String weightPhases = cli("workflow", "list", "--query",
        "WorkflowType = 'WeightPhaseWorkflow' AND RootWorkflowId = '" + id + "'", "-o", "json");
    int weightCount = 0;
    for (JsonNode w : JSON.readTree(weightPhases)) {
      assertTrue(w.get("execution").get("workflowId").asText().matches(
          java.util.regex.Pattern.quote(id) + "/r[1-4]-weight"), w.toString());
      weightCount++;
    }
    assertEquals(4, weightCount, weightPhases);
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
    assertFalse(history.contains("START_CHILD_WORKFLOW_EXECUTION_INITIATED"), "no phase may start");
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
