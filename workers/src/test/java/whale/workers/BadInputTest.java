package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.client.WorkflowUpdateException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import whale.workflows.Adjustment;
import whale.workflows.Payloads;
import whale.workflows.schedule.HarnessPatience;
import whale.workflows.schedule.Limits;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleStatus;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.task.Jsonl;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleWorkflow;

/**
 * Bad input at the doors a user reaches: dataset files with a malformed line, and malformed signal
 * and update payloads, against the test server with the real activities.
 */
class BadInputTest {
  @TempDir static Path artifacts;
  @TempDir static Path data;
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

  private static WorkflowOptions options(String id) {
    return WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
        .setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build();
  }

  /** A GSM8K spec whose train file's second line has no answer. */
  private static ExperimentSpec gsm8kWithoutAnswer() throws Exception {
    Path f = Files.write(data.resolve("train.jsonl"), List.of(
        "{\"question\": \"Half of 5?\", \"answer\": \"#### 2.5\"}",
        "{\"question\": \"Twice 4?\"}"));
    return SpecJson.parse("""
        { "name": "bad-data", "data": { "format": "gsm8k", "trainFile": "%s" } }
        """.formatted(f));
  }

  @Test
  void theCommandRejectsAMalformedDatasetLineBeforeStarting() throws Exception {
    ExperimentSpec spec = gsm8kWithoutAnswer();
    Exception e = assertThrows(Jsonl.MalformedFileException.class, () -> DataFiles.check(spec, true));
    assertEquals(data.resolve("train.jsonl") + ":2: no answer field (one of [answer])",
        Failures.rootMessage(e));
    // files this machine cannot see are the workers' to read
    ExperimentSpec elsewhere = SpecJson.parse("""
        { "name": "elsewhere", "data": { "format": "gsm8k", "trainFile": "/nonexistent/train.jsonl" } }
        """);
    DataFiles.check(elsewhere, false);
    assertThrows(IllegalArgumentException.class, () -> DataFiles.check(elsewhere, true));
  }

  @Test
  void aMalformedDatasetLineFailsTheRunAtOnceWithFileAndLine(WorkflowClient client) throws Exception {
    ExperimentSpec spec = gsm8kWithoutAnswer();
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, options("bad-data"));
    long t0 = System.nanoTime();
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> wf.run(spec, null));
    double seconds = (System.nanoTime() - t0) / 1e9;
    // what `whale` prints as its last line
    assertEquals(data.resolve("train.jsonl") + ":2: no answer field (one of [answer])",
        Failures.rootMessage(e));
    List<HistoryEvent> started = client.fetchHistory("bad-data").getEvents().stream()
        .filter(ev -> ev.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED).toList();
    assertEquals(1, started.size(), "one activity, one attempt: " + started);
    assertEquals(1, started.get(0).getActivityTaskStartedEventAttributes().getAttempt());
    assertTrue(seconds < 30, "failed in " + seconds + " s");
  }

  @Test
  void malformedSignalAndUpdatePayloadsAreRejectedByFieldAndTheRunCarriesOn(WorkflowClient client)
      throws Exception {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow", options("payloads"));
    stub.signalWithStart("pause", new Object[] {}, new Object[] {TinyRun.spec("payloads"), null});
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, "payloads");
    WhaleStatus before = waitFor(wf, s -> s.paused() && !Double.isNaN(s.bestMeanAt8()));
    ObjectMapper json = new ObjectMapper();

    for (var bad : BadPayloads.UPDATES.entrySet()) {
      JsonNode payload = json.readTree(bad.getKey());
      WorkflowUpdateException e = assertThrows(WorkflowUpdateException.class,
          () -> stub.update("adjust", String.class, payload), bad.getKey());
      String msg = String.valueOf(e.getCause().getMessage());
      assertTrue(msg.contains(bad.getValue()), bad.getKey() + " -> '" + msg + "'");
    }
    for (String bad : BadPayloads.SIGNALS.keySet()) {
      stub.signal("phaseProgress", json.readTree(bad));
    }
    WhaleStatus after = waitFor(wf, s -> s.rejected().size() == BadPayloads.SIGNALS.size());
    List<String> expected = BadPayloads.SIGNALS.values().stream().toList();
    for (int i = 0; i < expected.size(); i++) {
      assertTrue(after.rejected().get(i).startsWith("signal phaseProgress ignored: ")
          && after.rejected().get(i).contains(expected.get(i)), after.rejected().get(i) + " vs " + expected.get(i));
    }
    // nothing changed but the record of what was ignored
    assertEquals(before, withoutRejections(after));
    assertEquals(before.step(), after.step());

    // the run goes on: a valid adjustment still applies, and the run spends it and finishes
    assertTrue(wf.adjust(Payloads.tree(new Adjustment(1.5, null, null, null))).contains("weight budget 6 steps"));
    wf.resume();
    // a malformed limits signal to the running phase is ignored (logged) as well
    WhaleStatus running = waitFor(wf, s -> s.phaseWorkflowId() != null);
    WorkflowStub phase = client.newUntypedWorkflowStub(running.phaseWorkflowId());
    phase.signal("limits", json.readTree("{\"budgetSteps\": \"lots\"}"));
    // well-formed but impossible: applied, a budget of -1 would end the phase at once
    phase.signal("limits", Payloads.tree(new Limits(4, 2, -1, 2, 30, 1, 0, 1, new HarnessPatience(1, 1, 1))));
    WhaleResult r = stub.getResult(WhaleResult.class);
    assertEquals(6, r.steps(), "the adjusted budget is spent, the bad limits ignored");
    assertEquals(28, BadPayloads.UPDATES.size() + BadPayloads.SIGNALS.size());
  }

  private static WhaleStatus withoutRejections(WhaleStatus s) {
    return new WhaleStatus(s.phase(), s.paused(), s.stopRequested(), s.round(), s.step(), s.budgetSteps(),
        s.harnessIteration(), s.rollouts(), s.testRollouts(), s.bestMeanAt8(), s.bestAt(), s.rolloutsAtBest(),
        s.checkpointRef(), s.harnessRef(), s.harnessName(), s.phaseWorkflowId(), s.continuedAsNew(), List.of());
  }

  private static WhaleStatus waitFor(WhaleWorkflow wf, Predicate<WhaleStatus> p) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (System.nanoTime() < deadline) {
      WhaleStatus s = wf.status();
      if (p.test(s)) {
        return s;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("condition not reached; status " + wf.status());
  }
}
