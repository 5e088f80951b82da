package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import whale.workers.e2e.RunTree.History;
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
 * reference run: equality is determinism plus memoization, not a cache hit. A run is a tree of
 * workflows (the parent and one child per phase, which schedules the phase's activities), so every
 * check reads every history of the tree: the parent's, each child's, and each earlier run of a
 * workflow that continued as new.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CrashIT {
  static Path dir;
  static DevServer server;
  static WorkflowServiceStubs service;
  static WorkflowClient client;
  static ExperimentSpec spec;
  static Run reference;
  static Path gate;

  /**
   * A finished run: the parent's histories first, then its children's, in the order they were
   * started; the workflow id is kept to normalise it out of activity inputs and child ids.
   */
  record Run(String workflowId, WhaleResult result, List<History> histories) {}

  @BeforeAll
  static void up() throws Exception {
    dir = E2e.outputDir("crash");
    server = DevServer.start(dir, false);
    service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(server.address()).build());
    client = WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder().setNamespace("default").build());
    // proposals come from a gated command, open in every run but the one that kills the harness
    // worker in the middle of a proposal (a template proposal takes 0.5 s: too short a window)
    gate = dir.resolve("proposal-gate");
    Files.createFile(gate);
    var json = new com.fasterxml.jackson.databind.ObjectMapper();
    var tree = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(
        Path.of("src/test/resources/e2e/crash.json").toAbsolutePath().toFile());
    var harness = (com.fasterxml.jackson.databind.node.ObjectNode) tree.get("harness");
    harness.put("proposer", "command");
    E2e.gatedProposer(dir, gate).forEach(harness.putArray("command")::add);
    spec = SpecJson.parse(json.writeValueAsString(tree));
    long t0 = System.nanoTime();
    reference = run("reference", w -> { });
    System.out.printf("reference run: %.1f s, best mean@8 %.4f, checkpoint %s%n",
        (System.nanoTime() - t0) / 1e9, reference.result().bestMeanAt8(),
        reference.result().checkpointRef());
    assertEquals(0, retried(reference.histories()).size(), "the reference run needs no retry");
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
      List<History> histories = tree(id, false);
      for (int i = 0; i < histories.size(); i++) {
        History h = histories.get(i);
        Files.writeString(runDir.resolve(String.format("history-%02d-%s.json", i,
            h.workflowId().replaceAll("[^A-Za-z0-9_.-]", "_"))), h.history().toJson(true));
      }
      return new Run(id, result, histories);
    }
  }

  static List<History> tree(String root, boolean live) {
    return RunTree.tree(client, root, live);
  }

  // ---- observing the run ----

  static boolean notFound(io.grpc.StatusRuntimeException e) {
    return RunTree.notFound(e);
  }

  static DescribeWorkflowExecutionResponse describe(String workflowId) {
    return RunTree.describe(service, workflowId);
  }

  /** The pending activities of the running parent and of its running children, recursively. */
  static List<PendingActivityInfo> pending() {
    List<PendingActivityInfo> out = new ArrayList<>();
    Deque<String> todo = new ArrayDeque<>(List.of(id));
    while (!todo.isEmpty()) {
      DescribeWorkflowExecutionResponse d;
      try {
        d = describe(todo.poll());
      } catch (io.grpc.StatusRuntimeException e) {
        if (notFound(e)) {
          continue; // a child initiated but not yet started
        }
        throw e;
      }
      out.addAll(d.getPendingActivitiesList());
      d.getPendingChildrenList().forEach(c -> todo.add(c.getWorkflowId()));
    }
    return out;
  }

  /** Activities of {@code type} completed so far, anywhere in the run's tree. */
  static long completed(String type) {
    return completedPerType(tree(id, true)).getOrDefault(type, 0);
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

  static Map<String, Integer> scheduled(Run run) {
    return RunTree.scheduled(run.histories(), run.workflowId());
  }

  static Map<String, Integer> children(Run run) {
    return RunTree.children(run.histories(), run.workflowId());
  }

  static Map<String, EventType> ends(Run run) {
    return RunTree.ends(run.histories(), run.workflowId());
  }

  static long count(List<History> histories, EventType type) {
    return RunTree.count(histories, type);
  }

  static Map<String, Integer> completedPerType(List<History> histories) {
    return RunTree.completedPerType(histories);
  }

  static List<String> retried(List<History> histories) {
    return RunTree.retried(histories);
  }

  static WhaleResult timeless(WhaleResult r) {
    return RunTree.timeless(r);
  }

  static void assertSurvived(String name, Run run) {
    assertEquals(timeless(reference.result()), timeless(run.result()),
        name + ": the result must equal the uninterrupted run's");
    assertEquals(children(reference), children(run),
        name + ": the same phase child workflows, each started once");
    assertEquals(ends(reference), ends(run), name + ": every workflow of the run ended the same way");
    assertEquals(scheduled(reference), scheduled(run),
        name + ": every activity scheduled exactly as in the uninterrupted run (none repeated), "
            + "in the parent and in every phase child");
    assertEquals(completedPerType(reference.histories()), completedPerType(run.histories()),
        name + ": completed activities per type");
    System.out.printf("%s: survived; %d histories; completed %s; retried attempts %s; workflow "
            + "tasks timed out %d, failed %d; best mean@8 %.4f%n",
        name, run.histories().size(), completedPerType(run.histories()),
        retried(run.histories()),
        count(run.histories(), EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT),
        count(run.histories(), EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED),
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
    assertTrue(retried(run.histories()).contains("RsftStep"),
        "the killed RSFT step was retried: " + retried(run.histories()));
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
    assertTrue(retried(run.histories()).contains("Evaluate"),
        "the killed evaluation was retried: " + retried(run.histories()));
  }

  @Test
  @Order(3)
  void harnessWorkerKilledInTheMiddleOfAProposal() throws Exception {
    Files.delete(gate);
    Path waiting = Path.of(gate + ".waiting");
    Files.deleteIfExists(waiting);
    Run run;
    try {
      run = run("harness", w -> {
        // the proposal holds at the closed gate, so the kill lands inside it whatever the load
        E2e.waitForFile(waiting);
        awaitRunning("Propose", 0);
        w.harness.kill9();
        Files.createFile(gate);
        w.harness.start();
      });
    } finally {
      if (!Files.exists(gate)) {
        Files.createFile(gate); // the later tests' proposals must not wait
      }
    }
    assertSurvived("harness worker", run);
    assertTrue(retried(run.histories()).contains("Propose"),
        "the killed proposal was retried: " + retried(run.histories()));
  }

  @Test
  @Order(4)
  void controlWorkerKilledWhileAHarnessPhaseRuns() throws Exception {
    Run run = run("control", w -> {
      // the parent waits on its harness child and the child on a running activity: the worker that
      // runs both workflows dies with both mid-flight, and the activity finishes while it is gone
      WhaleStatus s = awaitStatus(st -> st.phase().equals("harness") && st.phaseWorkflowId() != null);
      awaitActivityRunningIn(s.phaseWorkflowId());
      w.control.kill9();
      Thread.sleep(3000);
      w.control.start();
    });
    assertSurvived("control worker", run);
  }

  /**
   * Waits until the workflow {@code workflowId} (a phase child) has an activity on a worker. The
   * parent names its phase child while starting it, so the child may not exist yet at first.
   */
  static void awaitActivityRunningIn(String workflowId) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (System.nanoTime() < deadline) {
      List<PendingActivityInfo> pending;
      try {
        pending = describe(workflowId).getPendingActivitiesList();
      } catch (io.grpc.StatusRuntimeException e) {
        if (!notFound(e)) {
          throw e;
        }
        pending = List.of();
      }
      for (PendingActivityInfo p : pending) {
        if (p.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
          return;
        }
      }
      Thread.sleep(25);
    }
    throw new AssertionError("no activity ran in " + workflowId);
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
