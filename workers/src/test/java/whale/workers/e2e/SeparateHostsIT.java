package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.common.converter.DefaultDataConverter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import whale.workers.e2e.RunTree.History;
import whale.workflows.RunEvent;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * A WHALE run with its parts on separate network hosts that share no artifact directory: one
 * Linux network namespace each for the Temporal dev server, the S3 server (S3Proxy), the client
 * that starts the run (the temporal CLI) and the control, gpu, eval and harness workers, joined by
 * a bridge in a namespace of its own (10.77.0.0/24, no route out; see {@link Network}). Each worker
 * has its own cache directory and reaches artifacts only through S3. Needs root (CI runs it as
 * root): it fails, never skips, when it cannot build the network.
 *
 * <p>Run A goes through untouched. Run B, the same seeded spec under a fresh S3 prefix (so that
 * nothing of A's is memoised), has the eval host's cable pulled for 30 s while an evaluation is
 * on it, then loses the gpu worker holding an RSFT step (killed, its cache wiped, started again);
 * it must end with exactly A's result, having scheduled exactly A's activities. Each fault is
 * set up before the activity it hits is handed out (the link down, the worker frozen), so it
 * cannot miss however short the activity: no timing window.
 *
 * <p>The control worker (the workflows) has a host of its own as well: no activity runs beside
 * the workflow code, so every hand-over between a workflow and an activity crosses the network.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SeparateHostsIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String PREFIX = "whit-";
  static final String BUCKET = "whale-it";
  static final Duration CUT = Duration.ofSeconds(30);
  static final List<String> QUEUES = List.of("control", "gpu", "eval", "harness");

  static long t0;
  static Path dir;
  static Network net;
  static Host client;
  static final Map<String, Host> workerHosts = new LinkedHashMap<>();
  static DevServer server;
  static S3Server s3;
  static Run reference;

  record Run(String workflowId, WhaleResult result, List<History> histories, Path dir) {}

  @BeforeAll
  static void up() throws Exception {
    t0 = System.nanoTime();
    net = Network.create(PREFIX, "10.77.0"); // first: it stops what a crashed run left writing
    dir = E2e.outputDir("hosts");
    Host temporal = net.host("temporal", 2);
    Host s3Host = net.host("s3", 3);
    client = net.host("client", 4);
    int octet = 10;
    for (String q : QUEUES) {
      workerHosts.put(q, net.host(q, octet++));
    }
    // the hosts are on their own: no default route anywhere, and this JVM (the root namespace)
    // cannot reach them, so every byte below goes between the namespaces
    for (Host h : workerHosts.values()) {
      assertEquals("", Network.ip("-n", h.namespace, "route", "show", "default").trim(),
          h + " must have no route out");
    }
    server = DevServer.start(Files.createDirectories(dir.resolve("temporal")), false, temporal);
    s3 = S3Server.start(Files.createDirectories(dir.resolve("s3")), s3Host, BUCKET);
    // a TCP connect proves nothing here (this machine's own network may accept any connection),
    // so ask the server something: from the root namespace, no answer may come
    Temporal.Result outside = Temporal.cli(Host.LOCAL, Duration.ofSeconds(30), server.address(),
        "operator", "namespace", "describe", "--namespace", "default", "--command-timeout", "5s");
    assertTrue(outside.rc() != 0, "the root namespace must not reach the dev server at "
        + server.address() + ": " + outside.out());
    log("network of %d hosts, dev server at %s, S3 at %s", 3 + workerHosts.size(),
        server.address(), s3.endpoint());
  }

  @AfterAll
  static void down() {
    // whatever happened: every process, then every namespace and veth
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      try {
        if (s3 != null) {
          s3.close();
        }
      } finally {
        if (net != null) {
          net.close();
        } else {
          Network.removeLeftovers(PREFIX);
        }
        log("network removed");
      }
    }
  }

  interface Chaos {
    void act(String workflowId, Map<String, WorkerProcess> workers, Path runDir) throws Exception;
  }

  @Test
  @Order(1)
  void aRunWithEveryWorkerOnItsOwnHost() throws Exception {
    reference = run("a", (id, w, runDir) -> { });
    log("run A: best mean@8 %.4f, checkpoint %s, harness %s, evaluations %s",
        reference.result().bestMeanAt8(), reference.result().checkpointRef(),
        reference.result().harnessRef(), means(reference.result()));
    assertEquals(List.of(), RunTree.retried(reference.histories()), "run A needs no retry");
  }

  @Test
  @Order(2)
  void theSameRunSurvivesAWipedGpuWorkerAndACutEvalLink() throws Exception {
    if (reference == null) {
      fail("run A did not finish: nothing to compare with");
    }
    Run run = run("b", (id, w, runDir) -> {
      // 1. The eval host loses its link once the run is training: the next evaluation is handed
      // to a host that cannot answer, so it cannot finish (however short it is); the link stays
      // down 30 s, and at least 25 s after that hand-over, beyond the heartbeat timeout (20 s),
      // so the server gives that attempt up and retries it.
      Host eval = workerHosts.get("eval");
      awaitStatus(id, s -> s.get("step").asInt() >= 1);
      net.cut(eval);
      long cut = System.nanoTime();
      log("eval host's link down");
      Set<String> evaluating = awaitStarted(id, "Evaluate");
      long handed = System.nanoTime();
      log("evaluation %s running on the cut-off host", evaluating);
      sleepUntil(Math.max(cut + CUT.toNanos(), handed + TimeUnit.SECONDS.toNanos(25)));
      net.restore(eval);
      log("eval host's link up again after %.0f s", (System.nanoTime() - cut) / 1e9);

      // 2. The gpu worker dies holding an RSFT step, and comes back with its cache wiped: the
      // step it retries needs the checkpoint of the step before, which only S3 still has. It is
      // frozen while idle (round 1's harness phase, which runs no gpu activity), so the next
      // step, round 2's first, is handed to it whatever its length; killed once the server shows
      // that step running on it.
      WorkerProcess gpu = w.get("gpu");
      JsonNode at = awaitStatus(id, s -> s.get("phase").asText().equals("harness")
          || s.get("round").asInt() >= 2);
      if (!at.get("phase").asText().equals("harness")) {
        fail("round 1's harness phase went by unseen: " + at);
      }
      gpu.freeze();
      log("gpu worker frozen in round 1's harness phase");
      Set<String> step = awaitStarted(id, "RsftStep");
      gpu.kill9();
      deleteTree(runDir.resolve("cache-gpu"));
      log("gpu worker killed holding RSFT step %s, its cache deleted", step);
      gpu.start();
      log("gpu worker started again with an empty cache");
    });
    List<String> retried = RunTree.retried(run.histories());
    log("run B: best mean@8 %.4f, evaluations %s", run.result().bestMeanAt8(),
        means(run.result()));
    log("run B: activity attempts after the first, from the histories:%s",
        retries(run.histories()));
    for (String q : QUEUES) {
      log("run B worker %s log: %s", q, logSummary(run.dir().resolve("worker-" + q + ".log")));
    }

    assertEquals(RunTree.timeless(reference.result()), RunTree.timeless(run.result()),
        "run B must end with run A's result: the same evaluations, checkpoints and harness");
    String a = reference.workflowId();
    String b = run.workflowId();
    assertEquals(RunTree.children(reference.histories(), a), RunTree.children(run.histories(), b),
        "the same phase workflows, each started once");
    assertEquals(RunTree.ends(reference.histories(), a), RunTree.ends(run.histories(), b),
        "every workflow of the run ended as in run A");
    assertEquals(RunTree.scheduled(reference.histories(), a),
        RunTree.scheduled(run.histories(), b),
        "every activity scheduled as in run A: none repeated, none lost");
    assertEquals(RunTree.completedPerType(reference.histories()),
        RunTree.completedPerType(run.histories()), "completed activities per type");
    assertTrue(retried.contains("RsftStep"),
        "the RSFT step the killed gpu worker held was retried: " + retried);
    assertTrue(retried.contains("Evaluate"), "the evaluation the cut interrupted was retried: "
        + retried);
  }

  // ---- a run ----

  static Run run(String name, Chaos chaos) throws Exception {
    String id = "hosts-" + name;
    Path runDir = Files.createDirectories(dir.resolve(name));
    long start = System.nanoTime();
    Map<String, WorkerProcess> workers = startWorkers(name, runDir);
    log("run %s: %d workers up in %.1f s", name, workers.size(), (System.nanoTime() - start) / 1e9);
    try {
      long runStart = System.nanoTime();
      cli("workflow", "start", "--type", "WhaleWorkflow", "--task-queue", WhaleWorkflow.TASK_QUEUE,
          "--workflow-id", id, "--input-file", E2e.tinySpec().toString(),
          "--execution-timeout", "15m");
      chaos.act(id, workers, runDir);
      Temporal.Result done = Temporal.cli(client, Duration.ofMinutes(10), server.address(),
          "workflow", "result", "--workflow-id", id, "-o", "json");
      JsonNode status = JSON.readTree(done.ok()).get("status");
      assertEquals("COMPLETED", status == null ? null : status.asText(), done.out());
      log("run %s: completed in %.1f s", name, (System.nanoTime() - runStart) / 1e9);
      List<History> histories = RunTree.tree(SeparateHostsIT::show, id, false);
      for (int i = 0; i < histories.size(); i++) {
        History h = histories.get(i);
        Files.writeString(runDir.resolve(String.format("history-%02d-%s.json", i,
            h.workflowId().replaceAll("[^A-Za-z0-9_.-]", "_"))), h.history().toJson(true));
      }
      Run run = new Run(id, resultOf(histories, id), histories, runDir);
      log("run %s: S3 holds %s under %s/%s/; caches: %s", name,
          size(s3.data.resolve(BUCKET).resolve(name)), BUCKET, name, caches(runDir));
      return run;
    } finally {
      parallel(workers.values().stream().map(w -> (Runnable) w::close).toList());
    }
  }

  /**
   * One worker per queue, each on its own host with its own cache, all against the same S3
   * prefix; started side by side (JVM starts dominate a short run).
   */
  static Map<String, WorkerProcess> startWorkers(String name, Path runDir) {
    Map<String, WorkerProcess> out = new LinkedHashMap<>();
    for (String q : QUEUES) {
      Path cache = runDir.resolve("cache-" + q);
      out.put(q, new WorkerProcess(q, server.address(), "s3://" + BUCKET + "/" + name, runDir,
          workerHosts.get(q), s3.clientEnv(), List.of("--cache", cache.toString())));
    }
    try {
      parallel(out.values().stream().map(w -> (Runnable) w::start).toList());
    } catch (RuntimeException | Error e) {
      out.values().forEach(WorkerProcess::close);
      throw e;
    }
    return out;
  }

  static void parallel(List<Runnable> tasks) {
    try {
      CompletableFuture.allOf(tasks.stream().map(CompletableFuture::runAsync)
          .toArray(CompletableFuture[]::new)).join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  // ---- the client host: everything about the run goes through the temporal CLI there ----

  static String cli(String... args) {
    return Temporal.cli(client, Duration.ofSeconds(60), server.address(), args).ok();
  }

  /** A history as {@code temporal workflow show -o json} prints it (payloads left raw). */
  static WorkflowExecutionHistory show(String workflowId, String runId) {
    List<String> args = new ArrayList<>(List.of("workflow", "show", "--workflow-id", workflowId,
        "-o", "json", "--no-json-shorthand-payloads"));
    if (runId != null) {
      args.addAll(List.of("--run-id", runId));
    }
    return WorkflowExecutionHistory.fromJson(cli(args.toArray(String[]::new)), workflowId);
  }

  /** The result the parent completed with, decoded as the SDK decodes it. */
  static WhaleResult resultOf(List<History> histories, String workflowId) {
    History parent = null;
    for (History h : histories) {
      if (h.workflowId().equals(workflowId)) {
        parent = h; // runs come oldest first: the last is the one that completed
      }
    }
    HistoryEvent last = parent.events().get(parent.events().size() - 1);
    assertEquals(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, last.getEventType());
    return DefaultDataConverter.STANDARD_INSTANCE.fromPayloads(0,
        Optional.of(last.getWorkflowExecutionCompletedEventAttributes().getResult()),
        WhaleResult.class, WhaleResult.class);
  }

  static JsonNode status(String id) throws IOException {
    return JSON.readTree(cli("workflow", "query", "--workflow-id", id, "--name", "status",
        "-o", "json")).get("queryResult").get(0);
  }

  /** Polls the run's status query until {@code p} holds; failing if the run ends first. */
  static JsonNode awaitStatus(String id, Predicate<JsonNode> p) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (System.nanoTime() < deadline) {
      JsonNode s = status(id);
      if (p.test(s)) {
        return s;
      }
      if (s.get("phase").asText().equals("done")) {
        fail("the run ended before the moment awaited: " + s);
      }
      Thread.sleep(100);
    }
    return fail("the run never reached the moment awaited");
  }

  /** Waits for an attempt of {@code type} to be running on a worker (the server's view). */
  static Set<String> awaitStarted(String id, String type) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (System.nanoTime() < deadline) {
      Set<String> s = started(id, type);
      if (!s.isEmpty()) {
        return s;
      }
      Thread.sleep(100);
    }
    return fail("no " + type + " was handed to a worker within 2 minutes");
  }

  static void sleepUntil(long nanoTime) throws InterruptedException {
    long left = nanoTime - System.nanoTime();
    if (left > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  /**
   * The attempts of {@code type} running on a worker, in the workflow or its children, as
   * workflow/activity id#attempt.
   */
  static Set<String> started(String id, String type) throws IOException {
    Set<String> out = new TreeSet<>();
    Deque<String> todo = new ArrayDeque<>(List.of(id));
    while (!todo.isEmpty()) {
      String w = todo.poll();
      Temporal.Result r = Temporal.cli(client, Duration.ofSeconds(60), server.address(),
          "workflow", "describe", "--workflow-id", w, "-o", "json");
      if (r.rc() != 0) {
        continue; // a child initiated but not yet started
      }
      JsonNode d = JSON.readTree(r.out());
      for (JsonNode p : d.path("pendingActivities")) {
        if (p.path("activityType").path("name").asText().equals(type)
            && p.path("state").asText().toUpperCase().contains("STARTED")) {
          out.add(w + "/" + p.path("activityId").asText() + "#" + p.path("attempt").asText());
        }
      }
      for (JsonNode c : d.path("pendingChildren")) {
        todo.add(c.path("workflowId").asText());
      }
    }
    return out;
  }

  // ---- what the run left ----

  static List<String> means(WhaleResult r) {
    return r.evaluations().stream().map(SeparateHostsIT::mean).toList();
  }

  static String mean(RunEvent e) {
    return String.format("%s r%d s%d %.4f", e.phase(), e.round(), e.step(), e.meanAt8());
  }

  /**
   * Every activity that completed on a later attempt, with the failure the server recorded for the
   * attempt before it (a heartbeat timeout for a dead worker or a cut link); and activities that
   * failed or timed out for good, which a surviving run must not have.
   */
  static String retries(List<History> histories) {
    StringBuilder out = new StringBuilder();
    for (History h : histories) {
      Map<Long, String> types = new LinkedHashMap<>();
      for (HistoryEvent e : h.events()) {
        if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
          types.put(e.getEventId(),
              e.getActivityTaskScheduledEventAttributes().getActivityType().getName());
        } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
            && e.getActivityTaskStartedEventAttributes().getAttempt() > 1) {
          var a = e.getActivityTaskStartedEventAttributes();
          out.append(String.format("%n    %s in %s: attempt %d, the one before ended by: %s",
              types.get(a.getScheduledEventId()), h.workflowId(), a.getAttempt(),
              a.getLastFailure().getMessage()));
        }
      }
    }
    long failed = RunTree.count(histories, EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED);
    long timedOut = RunTree.count(histories, EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
    return out.append(String.format("%n    activities failed for good %d, timed out for good %d",
        failed, timedOut)).toString();
  }

  static final Pattern TROUBLE = Pattern.compile(
      "(?i)retr(y|ies|ying)|unavailable|deadline|timed? ?out|exception|error|warn|refused|reset");

  /**
   * The lines of a worker's log that speak of retries or errors (stack frames and DJL's
   * deprecation notice left out), counted by their first 110 characters, most frequent first.
   */
  static String logSummary(Path log) throws IOException {
    if (!Files.exists(log)) {
      return "no log";
    }
    Map<String, Integer> heads = new LinkedHashMap<>();
    int n = 0;
    for (String l : Files.readAllLines(log)) {
      if (TROUBLE.matcher(l).find() && !l.isEmpty() && !Character.isWhitespace(l.charAt(0))
          && !l.contains("AutoNonVariableTypeMode")) {
        n++;
        heads.merge(l.length() > 110 ? l.substring(0, 110) + "..." : l, 1, Integer::sum);
      }
    }
    StringBuilder out = new StringBuilder(n + " retry/error lines");
    heads.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .limit(5).forEach(e -> out.append(String.format("%n    %4dx %s", e.getValue(), e.getKey())));
    return out.toString();
  }

  static String caches(Path runDir) throws IOException {
    StringBuilder out = new StringBuilder();
    for (String q : QUEUES) {
      out.append(q).append(' ').append(size(runDir.resolve("cache-" + q))).append("; ");
    }
    return out.toString();
  }

  static String size(Path root) throws IOException {
    if (!Files.exists(root)) {
      return "nothing";
    }
    long files = 0;
    long bytes = 0;
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
        files++;
        bytes += Files.size(p);
      }
    }
    return String.format("%d files, %.1f MB", files, bytes / 1e6);
  }

  static void deleteTree(Path root) throws IOException {
    if (Files.exists(root)) {
      try (Stream<Path> walk = Files.walk(root)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    assertFalse(Files.exists(root), "could not delete " + root);
  }

  static void log(String format, Object... args) {
    System.out.printf("[hosts %5.1f s] %s%n", (System.nanoTime() - t0) / 1e9,
        String.format(format, args));
  }
}
