package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleStatus;
import whale.workflows.WhaleWorkflow;

/**
 * Crash survival against the real dev server with one {@code whale worker} JVM per queue: kill -9 a
 * worker (or the server) in the middle of its work, start it again, and the run completes with
 * exactly the activities of an uninterrupted run (none scheduled twice, none completed twice) and
 * exactly its result. Every run has its own fresh artifact store, so nothing is shared with the
 * reference run: equality is determinism plus memoization, not a cache hit.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CrashIT {
  static Path dir;
  static DevServer server;
  static WorkflowServiceStubs service;
  static WorkflowClient client;
  static ExperimentSpec spec;
  static Run reference;

  /** A finished run; the workflow id is kept to normalise it out of activity inputs. */
  record Run(String workflowId, WhaleResult result, List<HistoryEvent> history) {}

  @BeforeAll
  static void up() throws Exception {
    dir = E2e.outputDir("crash");
    server = DevServer.start(dir, false);
    service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(server.address()).build());
    client = WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder().setNamespace("default").build());
    spec = SpecJson.parse(Files.readString(
        Path.of("src/test/resources/e2e/crash.json").toAbsolutePath()));
    long t0 = System.nanoTime();
    reference = run("reference", w -> { });
    System.out.printf("reference run: %.1f s, best mean@8 %.4f, checkpoint %s%n",
        (System.nanoTime() - t0) / 1e9, reference.result().bestMeanAt8(),
        reference.result().checkpointRef());
    assertEquals(0, retried(reference.history()).size(), "the reference run needs no retry");
  }

  @AfterAll
  static void down() {
    if (service != null) {
      service.shutdownNow();
    }
    if (server != null) {
      server.close();
    }
  }

  interface Chaos {
    void act(Workers w) throws Exception;
  }

  static String id;

  static Run run(String name, Chaos chaos) throws Exception {
    id = "crash-" + name;
    Path runDir = Files.createDirectories(dir.resolve(name));
    try (Workers w = Workers.start(server.address(), runDir.resolve("artifacts"), runDir)) {
      WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow",
          WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
              .setWorkflowExecutionTimeout(Duration.ofMinutes(15)).build());
      stub.start(spec);
      chaos.act(w);
      WhaleResult result = stub.getResult(12, TimeUnit.MINUTES, WhaleResult.class);
      WorkflowExecutionHistory h = client.fetchHistory(id);
      Files.writeString(runDir.resolve("history.json"), h.toJson(true));
      return new Run(id, result, h.getEvents());
    }
  }

  // ---- observing the run ----

  static List<PendingActivityInfo> pending() {
    return service.blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default")
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(id)).build())
        .getPendingActivitiesList();
  }

  static long completed(String type) {
    List<HistoryEvent> events = client.fetchHistory(id).getEvents();
    Map<Long, String> types = new HashMap<>();
    long n = 0;
    for (HistoryEvent e : events) {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        types.put(e.getEventId(),
            e.getActivityTaskScheduledEventAttributes().getActivityType().getName());
      } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
          && type.equals(types.get(
              e.getActivityTaskCompletedEventAttributes().getScheduledEventId()))) {
        n++;
      }
    }
    return n;
  }

  /** Waits until an activity of {@code type} is running on a worker, after {@code done} finished. */
  static void awaitRunning(String type, long done) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (System.nanoTime() < deadline) {
      if (completed(type) >= done) {
        while (System.nanoTime() < deadline) {
          for (PendingActivityInfo p : pending()) {
            if (p.getActivityType().getName().equals(type)
                && p.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
              return;
            }
          }
          Thread.sleep(25);
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no " + type + " ran after " + done + " finished ones");
  }

  static WhaleStatus awaitStatus(Predicate<WhaleStatus> p) throws InterruptedException {
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, id);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (System.nanoTime() < deadline) {
      WhaleStatus s = wf.status();
      if (p.test(s)) {
        return s;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("status never matched");
  }

  // ---- what the history says ----

  /**
   * Every scheduled activity: type and input (the workflow id, which names phase keys, replaced by
   * a placeholder); the same multiset as the reference run's means no step was repeated.
   */
  static Map<String, Integer> scheduled(Run run) {
    Map<String, Integer> out = new TreeMap<>();
    for (HistoryEvent e : run.history()) {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        var a = e.getActivityTaskScheduledEventAttributes();
        StringBuilder in = new StringBuilder(a.getActivityType().getName());
        a.getInput().getPayloadsList().forEach(p -> in.append(' ').append(
            p.getData().toStringUtf8().replace(run.workflowId(), "<workflow-id>")));
        out.merge(in.toString(), 1, Integer::sum);
      }
    }
    return out;
  }

  static Map<String, Integer> completedPerType(List<HistoryEvent> events) {
    Map<Long, String> types = new HashMap<>();
    Map<String, Integer> out = new TreeMap<>();
    for (HistoryEvent e : events) {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        types.put(e.getEventId(),
            e.getActivityTaskScheduledEventAttributes().getActivityType().getName());
      } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
        out.merge(types.get(e.getActivityTaskCompletedEventAttributes().getScheduledEventId()),
            1, Integer::sum);
      }
    }
    return out;
  }

  /** Activity types whose completing attempt was not the first: the ones a crash interrupted. */
  static List<String> retried(List<HistoryEvent> events) {
    Map<Long, String> types = new HashMap<>();
    List<String> out = new ArrayList<>();
    for (HistoryEvent e : events) {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        types.put(e.getEventId(),
            e.getActivityTaskScheduledEventAttributes().getActivityType().getName());
      } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
          && e.getActivityTaskStartedEventAttributes().getAttempt() > 1) {
        out.add(types.get(e.getActivityTaskStartedEventAttributes().getScheduledEventId()));
      }
    }
    return out;
  }

  static void assertSurvived(String name, Run run) {
    assertEquals(reference.result(), run.result(),
        name + ": the result must equal the uninterrupted run's");
    assertEquals(scheduled(reference), scheduled(run),
        name + ": every activity scheduled exactly as in the uninterrupted run (none repeated)");
    assertEquals(completedPerType(reference.history()), completedPerType(run.history()),
        name + ": completed activities per type");
    System.out.printf("%s: survived; completed %s; retried attempts %s; best mean@8 %.4f%n",
        name, completedPerType(run.history()), retried(run.history()),
        run.result().bestMeanAt8());
  }

  // ---- the crash matrix ----

  @Test
  @Order(1)
  void gpuWorkerKilledDuringAnRsftStep() throws Exception {
    Run run = run("gpu", w -> {
      awaitRunning("RsftStep", 1);
      w.gpu.kill9();
      w.gpu.start();
    });
    assertSurvived("gpu worker", run);
    assertTrue(retried(run.history()).contains("RsftStep"),
        "the killed RSFT step was retried: " + retried(run.history()));
  }

  @Test
  @Order(2)
  void evalWorkerKilledDuringAnEvaluation() throws Exception {
    Run run = run("eval", w -> {
      awaitRunning("Evaluate", 1);
      w.eval.kill9();
      w.eval.start();
    });
    assertSurvived("eval worker", run);
    assertTrue(retried(run.history()).contains("Evaluate"),
        "the killed evaluation was retried: " + retried(run.history()));
  }

  @Test
  @Order(3)
  void harnessWorkerKilledWhileItCompiles() throws Exception {
    Run run = run("harness", w -> {
      awaitRunning("Propose", 0);
      w.harness.kill9();
      w.harness.start();
    });
    assertSurvived("harness worker", run);
    assertTrue(retried(run.history()).contains("Propose"),
        "the killed proposal was retried: " + retried(run.history()));
  }

  @Test
  @Order(4)
  void controlWorkerKilledBetweenPhases() throws Exception {
    Run run = run("control", w -> {
      awaitStatus(s -> s.phase().equals("harness"));
      w.control.kill9();
      Thread.sleep(3000);
      w.control.start();
    });
    assertSurvived("control worker", run);
  }

  @Test
  @Order(5)
  void devServerKilledAndRestartedOnTheSameDatabase() throws Exception {
    Run run = run("server", w -> {
      awaitRunning("RsftStep", 1);
      server.kill();
      Thread.sleep(2000);
      server.start();
    });
    assertSurvived("dev server", run);
  }
}
