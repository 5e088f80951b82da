import whale.bench.Spread;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import whale.workers.e2e.DevServer;
import whale.workers.e2e.E2e;
import whale.workers.e2e.RunTree;
import whale.workers.e2e.RunTree.History;
import whale.workers.e2e.WorkerProcess;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * Kill detection against the real dev server: one control+harness+eval worker JVM and TWO gpu
 * worker JVMs. An uninterrupted reference run first; then, in each measured run (a fresh artifact
 * store each, so nothing is a cache hit), the gpu worker that holds an RSFT step in the middle of
 * it is killed with SIGKILL (and its descendants), and the benchmark polls the weight-phase child's
 * pending activity until attempt 2 has started on the other gpu worker. Figures: seconds from the
 * kill to the retry's start, RSFT steps redone, and whether the run ends with the reference's
 * result. Not a test. Usage: bench/kill.sh [kills] (default 3).
 */
public class KillBench {
  static WorkflowServiceStubs service;
  static WorkflowClient client;
  static DevServer server;
  static Path dir;

  record Run(WhaleResult result, List<History> histories, double seconds) {}

  record Kill(double retryAfterS, double heartbeatAgoS, double stepElapsedS, int step, boolean otherWorker,
      String failure) {}

  public static void main(String[] args) throws Exception {
    int kills = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    long t0 = System.nanoTime();
    dir = E2e.outputDir("bench-kill");
    server = DevServer.start(dir, false);
    service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(server.address()).build());
    client = WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder().setNamespace("default").build());
    try {
      ExperimentSpec spec = spec();
      Run reference = run("reference", spec, null, null);
      List<Double> steps = stepSeconds(reference.histories());
      // kill halfway through a step: a step's work is really lost, and the step is still running
      long killAfterMs = (long) (Spread.median(steps) * 500);
      System.out.printf("reference: %.1f s, RSFT steps %s s, best mean@8 %.4f, checkpoint %s%n",
          reference.seconds(), fmt(steps), reference.result().bestMeanAt8(),
          reference.result().checkpointRef());
      List<Kill> measured = new ArrayList<>();
      List<Integer> redone = new ArrayList<>();
      List<Boolean> same = new ArrayList<>();
      List<Double> runSeconds = new ArrayList<>();
      for (int k = 1; k <= kills; k++) {
        Kill[] kill = new Kill[1];
        Run run = run("kill-" + k, spec, killAfterMs, kill);
        long retriedSteps = RunTree.retried(run.histories()).stream().filter("RsftStep"::equals).count();
        boolean equal = run.result().bestMeanAt8() == reference.result().bestMeanAt8()
            && run.result().checkpointRef().equals(reference.result().checkpointRef())
            && scheduledSteps(run.histories()) == scheduledSteps(reference.histories());
        System.out.printf("kill %d: %s; RSFT attempts retried %d; same result %s (best mean@8 %.4f, "
                + "checkpoint %s); run %.1f s%n", k, kill[0], retriedSteps, equal,
            run.result().bestMeanAt8(), run.result().checkpointRef(), run.seconds());
        measured.add(kill[0]);
        redone.add((int) retriedSteps);
        same.add(equal);
        runSeconds.add(run.seconds());
      }
      report(spec, reference, steps, measured, redone, same, runSeconds,
          (System.nanoTime() - t0) / 1e9);
    } finally {
      service.shutdownNow();
      server.close();
    }
  }

  /**
   * The tiny spec with RSFT steps of a few seconds (more rollouts per step), four of them in two
   * rounds, so the kill lands inside a step with steps before and after it.
   */
  static ExperimentSpec spec() throws IOException {
    ObjectMapper json = new ObjectMapper();
    ObjectNode tree = (ObjectNode) json.readTree(E2e.tinySpec().toFile());
    ((ObjectNode) tree.get("data")).put("weightProblems", 64);
    ObjectNode rsft = (ObjectNode) tree.get("rsft");
    rsft.put("promptsPerStep", 16);
    rsft.put("samplesPerPrompt", 16);
    rsft.put("minibatch", 64);
    tree.put("name", "bench-kill");
    return SpecJson.parse(json.writeValueAsString(tree));
  }

  /** One run on fresh workers and a fresh artifact store; with {@code killAfterMs}, one kill. */
  static Run run(String name, ExperimentSpec spec, Long killAfterMs, Kill[] kill) throws Exception {
    String id = "bench-kill-" + name;
    Path runDir = Files.createDirectories(dir.resolve(name));
    Path artifacts = runDir.resolve("artifacts");
    WorkerProcess control = new WorkerProcess("control,harness,eval", server.address(), artifacts,
        runDir);
    WorkerProcess gpuA = new WorkerProcess("gpu", server.address(), artifacts,
        Files.createDirectories(runDir.resolve("gpu-a")));
    WorkerProcess gpuB = new WorkerProcess("gpu", server.address(), artifacts,
        Files.createDirectories(runDir.resolve("gpu-b")));
    try {
      CompletableFuture.allOf(CompletableFuture.runAsync(control::start),
          CompletableFuture.runAsync(gpuA::start), CompletableFuture.runAsync(gpuB::start)).join();
      long t0 = System.nanoTime();
      WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow",
          WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
              .setWorkflowExecutionTimeout(Duration.ofMinutes(10)).build());
      stub.start(spec);
      if (killAfterMs != null) {
        kill[0] = killDuringStep(id, killAfterMs, gpuA, gpuB);
      }
      WhaleResult result = stub.getResult(8, TimeUnit.MINUTES, WhaleResult.class);
      double seconds = (System.nanoTime() - t0) / 1e9;
      List<History> histories = RunTree.tree(client, id, false);
      for (int i = 0; i < histories.size(); i++) {
        History h = histories.get(i);
        Files.writeString(runDir.resolve(String.format("history-%02d-%s.json", i,
            h.workflowId().replaceAll("[^A-Za-z0-9_.-]", "_"))), h.history().toJson(true));
      }
      return new Run(result, histories, seconds);
    } finally {
      control.close();
      gpuA.close();
      gpuB.close();
    }
  }

  /** A started RSFT step attempt, with the workflow (the weight-phase child) it belongs to. */
  record Pending(String workflowId, PendingActivityInfo info) {}

  /**
   * Waits for an RSFT step after the first to be {@code killAfterMs} into its first attempt, kills
   * the gpu worker running it, then polls until the next attempt has started.
   */
  static Kill killDuringStep(String id, long killAfterMs, WorkerProcess a, WorkerProcess b)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    Pending target = null;
    while (target == null && System.nanoTime() < deadline) {
      for (Pending p : pending(id)) {
        PendingActivityInfo i = p.info();
        if (i.getActivityType().getName().equals("RsftStep") && i.getAttempt() == 1
            && i.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
            && System.currentTimeMillis() - millis(i.getLastStartedTime()) >= killAfterMs
            && stepOf(p) >= 2) {
          target = p;
        }
      }
      Thread.sleep(20);
    }
    if (target == null) {
      throw new AssertionError("no RSFT step after the first ran in " + id);
    }
    String identity = target.info().getLastWorkerIdentity();
    WorkerProcess victim = identity.startsWith(a.pid() + "@") ? a
        : identity.startsWith(b.pid() + "@") ? b : null;
    if (victim == null) {
      throw new AssertionError("RSFT step on " + identity + ", neither gpu worker (" + a.pid() + ", "
          + b.pid() + ")");
    }
    WorkerProcess other = victim == a ? b : a;
    long killedAt = System.currentTimeMillis();
    victim.kill9();
    double heartbeatAgo = (killedAt - millis(target.info().getLastHeartbeatTime())) / 1000.0;
    double elapsed = (killedAt - millis(target.info().getLastStartedTime())) / 1000.0;
    String activityId = target.info().getActivityId();
    while (System.nanoTime() < deadline) {
      DescribeWorkflowExecutionResponse d = RunTree.describe(service, target.workflowId());
      for (PendingActivityInfo i : d.getPendingActivitiesList()) {
        if (i.getActivityId().equals(activityId) && i.getAttempt() > 1
            && i.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
          return new Kill((millis(i.getLastStartedTime()) - killedAt) / 1000.0, heartbeatAgo, elapsed,
              stepOf(target), i.getLastWorkerIdentity().startsWith(other.pid() + "@"),
              i.getLastFailure().getMessage());
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the killed RSFT step was not retried within 5 minutes");
  }

  /** The step index, from the activity's summary "RSFT step N/M (round R)" in the scheduled event. */
  static int stepOf(Pending p) {
    for (HistoryEvent e : client.fetchHistory(p.workflowId()).getEvents()) {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
          && e.getActivityTaskScheduledEventAttributes().getActivityId().equals(p.info().getActivityId())) {
        String summary = e.getUserMetadata().getSummary().getData().toStringUtf8();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("RSFT step (\\d+)/").matcher(summary);
        if (m.find()) {
          return Integer.parseInt(m.group(1));
        }
      }
    }
    return -1;
  }

  /** Started activities of the run's running workflows, recursively through pending children. */
  static List<Pending> pending(String root) {
    List<Pending> out = new ArrayList<>();
    Deque<String> todo = new ArrayDeque<>(List.of(root));
    while (!todo.isEmpty()) {
      String w = todo.poll();
      DescribeWorkflowExecutionResponse d;
      try {
        d = RunTree.describe(service, w);
      } catch (io.grpc.StatusRuntimeException e) {
        if (RunTree.notFound(e)) {
          continue; // a child initiated but not yet started
        }
        throw e;
      }
      d.getPendingActivitiesList().forEach(i -> out.add(new Pending(w, i)));
      d.getPendingChildrenList().forEach(c -> todo.add(c.getWorkflowId()));
    }
    return out;
  }

  /** RSFT step activities scheduled in the run (a redone step scheduled again would add one). */
  static long scheduledSteps(List<History> histories) {
    return histories.stream().flatMap(h -> h.events().stream())
        .filter(e -> e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            && e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals("RsftStep"))
        .count();
  }

  /** Each RSFT step's duration in an uninterrupted run, from its started to its completed event. */
  static List<Double> stepSeconds(List<History> histories) {
    List<Double> out = new ArrayList<>();
    for (History h : histories) {
      Map<Long, Long> started = new HashMap<>();
      Map<Long, Boolean> rsft = new HashMap<>();
      for (HistoryEvent e : h.events()) {
        if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
          rsft.put(e.getEventId(),
              e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals("RsftStep"));
        } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
          started.put(e.getActivityTaskStartedEventAttributes().getScheduledEventId(),
              millis(e.getEventTime()));
        } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
          long s = e.getActivityTaskCompletedEventAttributes().getScheduledEventId();
          if (rsft.getOrDefault(s, false)) {
            out.add((millis(e.getEventTime()) - started.get(s)) / 1000.0);
          }
        }
      }
    }
    return out;
  }

  static void report(ExperimentSpec spec, Run reference, List<Double> steps, List<Kill> kills,
      List<Integer> redone, List<Boolean> same, List<Double> runSeconds, double total)
      throws IOException {
    List<Double> retry = kills.stream().map(Kill::retryAfterS).toList();
    int maxRedone = redone.stream().mapToInt(Integer::intValue).max().orElse(-1);
    boolean allSame = same.stream().allMatch(Boolean::booleanValue);
    boolean allOther = kills.stream().allMatch(Kill::otherWorker);
    StringBuilder md = new StringBuilder();
    md.append("## 3. Kill detection\n\n");
    md.append("| figure | measured | goal | met |\n|---|---|---|---|\n");
    md.append(String.format(Locale.ROOT, "| kill -9 of a gpu worker mid-RSFT-step to the retry's start on the other gpu worker | %s s | at most 30 s | %s |%n",
        stats(retry), yes(!retry.isEmpty() && max(retry) <= 30 && allOther)));
    md.append(String.format(Locale.ROOT, "| RSFT steps redone per kill | %s (max %d) | at most 1 | %s |%n",
        redone, maxRedone, yes(maxRedone >= 0 && maxRedone <= 1)));
    md.append(String.format(Locale.ROOT, "| work lost per kill (the killed attempt's elapsed time) | %s s | at most one RSFT step (%s s) | %s |%n",
        stats(kills.stream().map(Kill::stepElapsedS).toList()), stats(steps),
        yes(maxRedone >= 0 && maxRedone <= 1)));
    md.append(String.format(Locale.ROOT, "| killed runs ending with the reference's best mean@8 and final checkpoint | %d of %d | all | %s |%n",
        same.stream().filter(Boolean::booleanValue).count(), same.size(), yes(allSame)));
    md.append("\n");
    md.append(String.format(Locale.ROOT, "Measured %s, load average at the end %s on %d cores; %d kills, "
            + "the whole benchmark %.0f s. The tiny spec with bigger RSFT steps (%d prompts x %d samples, "
            + "%d steps in %d rounds; one step %s s in the reference run, %.1f s for the whole run; "
            + "killed runs %s s). One dev server, a control+harness+eval worker JVM and two gpu worker "
            + "JVMs, fresh ones and a fresh artifact store per run. Each kill: when an RSFT step after "
            + "the first was half a step into its first attempt, the gpu worker holding it "
            + "(DescribeWorkflowExecution's pending activity, lastWorkerIdentity = pid@host) got SIGKILL "
            + "with its descendants; then the weight-phase child's pending activity was polled every 50 ms "
            + "until attempt 2 was STARTED; the figure is its lastStartedTime minus the kill.%n%n",
        java.time.Instant.now().toString().substring(0, 16) + " UTC", load(),
        Runtime.getRuntime().availableProcessors(), kills.size(), total,
        spec.rsft().promptsPerStep(), spec.rsft().samplesPerPrompt(), steps.size(),
        reference.result().rounds(), stats(steps), reference.seconds(), stats(runSeconds)));
    md.append(String.format(Locale.ROOT, "Detection is the heartbeat timeout (20 s, WorkflowStubs.HEARTBEAT; "
            + "each attempt heartbeats every 4 s from its own ticker) plus the first retry interval (1 s): "
            + "the last heartbeat was %s s before the kill, so the server declares the attempt dead about "
            + "20 s after that heartbeat and schedules attempt 2 a second later, which the idle gpu worker "
            + "starts at once. The failure the retry saw: \"%s\". A kill loses only the attempt in flight: "
            + "each step is its own activity whose checkpoint is memoized in the artifact store, so the "
            + "retry redoes that step from the previous step's checkpoint and no RSFT step was scheduled "
            + "again (%s scheduled, as in the reference).%n",
        stats(kills.stream().map(Kill::heartbeatAgoS).toList()),
        kills.isEmpty() ? "" : kills.get(0).failure(), scheduledSteps(reference.histories())));
    Files.writeString(Path.of(System.getenv().getOrDefault("BENCH_OUT", "/dev/stdout")), md + "\n",
        StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
  }

  static String load() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (IOException e) {
      return "?";
    }
  }

  static String yes(boolean b) {
    return b ? "yes" : "no";
  }

  static long millis(com.google.protobuf.Timestamp t) {
    return t.getSeconds() * 1000 + t.getNanos() / 1_000_000;
  }

  static double max(List<Double> xs) {
    return xs.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
  }

  /** median (min-max, n=N) */
  static String stats(List<Double> xs) {
    if (xs.isEmpty()) {
      return "none";
    }
    return Spread.of(xs, "%.1f");
  }

  static String fmt(List<Double> xs) {
    return xs.stream().map(x -> String.format(Locale.ROOT, "%.1f", x)).toList().toString();
  }
}
