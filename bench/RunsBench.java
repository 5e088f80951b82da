import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.temporal.api.enums.v1.EventType;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import whale.workers.e2e.DevServer;
import whale.workers.e2e.E2e;
import whale.workers.e2e.RunTree;
import whale.workers.e2e.RunTree.History;
import whale.workers.e2e.WorkerProcess;
import whale.workers.e2e.Workers;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * Many runs, long runs, against the real dev server with one worker JVM per queue. (a) N concurrent
 * runs of the tiny spec, each its own seed: the time until all completed, and each worker's peak
 * memory (the JVM's VmHWM, and the peak summed RSS of its process tree: sandboxes and proposers it
 * starts are part of its cost). (b) One run of 30 rounds at the smallest sizes, continuing as new
 * every few phases: every history of its tree (the parent's runs, every child's) and its largest
 * event count. Not a test. Usage: bench/runs.sh [concurrent] [rounds] (default 20 30).
 */
public class RunsBench {
  static WorkflowServiceStubs service;
  static WorkflowClient client;
  static DevServer server;
  static final ObjectMapper JSON = new ObjectMapper();
  /** Phases per parent workflow run in (b): 30 rounds are 60 phases, so five continue-as-new. */
  static final int CONTINUE_AS_NEW_AFTER = 10;

  public static void main(String[] args) throws Exception {
    int concurrent = args.length > 0 ? Integer.parseInt(args[0]) : 20;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 30;
    long t0 = System.nanoTime();
    Path dir = E2e.outputDir("bench-runs");
    server = DevServer.start(dir, false);
    service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(server.address()).build());
    client = WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder().setNamespace("default").build());
    StringBuilder md = new StringBuilder("## 5. Many runs, long runs\n\n");
    md.append("| figure | measured | goal | met |\n|---|---|---|---|\n");
    StringBuilder notes = new StringBuilder();
    try (Workers w = Workers.start(server.address(), dir.resolve("artifacts"), dir)) {
      many(w, concurrent, md, notes);
      longRun(w, rounds, md, notes);
    } finally {
      service.shutdownNow();
      server.close();
    }
    notes.append(String.format(Locale.ROOT, "Whole benchmark %.0f s (worker and server start "
        + "included); load average at the end %s on %d cores.%n", (System.nanoTime() - t0) / 1e9,
        load(), Runtime.getRuntime().availableProcessors()));
    Files.writeString(Path.of(System.getenv().getOrDefault("BENCH_OUT", "/dev/stdout")),
        md + "\n" + notes + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND,
        StandardOpenOption.WRITE);
  }

  static WorkflowStub start(String id, ExperimentSpec spec) {
    WorkflowStub stub = client.newUntypedWorkflowStub("WhaleWorkflow",
        WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id)
            .setWorkflowExecutionTimeout(Duration.ofMinutes(20)).build());
    stub.start(spec);
    return stub;
  }

  /** (a): all runs started at once, each waited for; memory sampled every 250 ms meanwhile. */
  static void many(Workers w, int n, StringBuilder md, StringBuilder notes) throws Exception {
    ObjectNode tiny = (ObjectNode) JSON.readTree(E2e.tinySpec().toFile());
    WorkerProcess[] procs = {w.control, w.gpu, w.harness, w.eval};
    Map<String, Long> treePeakKb = new ConcurrentHashMap<>();
    Thread sampler = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        for (WorkerProcess p : procs) {
          treePeakKb.merge(p.queues, treeRssKb(p.pid()), Math::max);
        }
        try {
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    sampler.setDaemon(true);
    sampler.start();
    Map<String, Double> cpu0 = new LinkedHashMap<>();
    for (WorkerProcess p : procs) {
      cpu0.put(p.queues, cpuSeconds(p.pid()));
    }
    long t0 = System.nanoTime();
    List<WorkflowStub> stubs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ObjectNode s = tiny.deepCopy();
      s.put("seed", 100 + i); // each run its own base model and steps: no run is another's cache hit
      s.put("name", "bench-many-" + i);
      stubs.add(start("bench-many-" + i, SpecJson.parse(JSON.writeValueAsString(s))));
    }
    // each run's end as it happens (waiting in start order would see them in that order only)
    List<Double> finished = java.util.Collections.synchronizedList(new ArrayList<>());
    java.util.concurrent.CompletableFuture.allOf(stubs.stream()
        .map(stub -> stub.getResultAsync(15, TimeUnit.MINUTES, WhaleResult.class)
            .thenRun(() -> finished.add((System.nanoTime() - t0) / 1e9)))
        .toArray(java.util.concurrent.CompletableFuture[]::new)).get();
    int done = finished.size();
    double drain = (System.nanoTime() - t0) / 1e9;
    sampler.interrupt();
    sampler.join();
    double cpu = 0;
    for (WorkerProcess p : procs) {
      cpu += cpuSeconds(p.pid()) - cpu0.get(p.queues);
    }
    System.out.printf("(a) %d runs completed in %.1f s%n", done, drain);
    md.append(String.format(Locale.ROOT, "| (a) %d concurrent tiny runs completed | %d of %d | all | %s |%n",
        n, done, n, done == n ? "yes" : "no"));
    List<Double> ends = finished.stream().sorted().toList();
    md.append(String.format(Locale.ROOT, "| (a) time to drain all %d (first start to last result) | %.0f s (runs ended from %.0f s, median %.0f s) | - | - |%n",
        n, drain, ends.get(0), ends.get(ends.size() / 2)));
    md.append(String.format(Locale.ROOT, "| (a) CPU time of the four workers' process trees | %.0f s (%.1f s per run) | - | - |%n",
        cpu, cpu / n));
    for (WorkerProcess p : procs) {
      long hwm = statusKb(p.pid(), "VmHWM:");
      System.out.printf("(a) %s worker: VmHWM %d MiB, process tree peak RSS %d MiB%n", p.queues,
          hwm / 1024, treePeakKb.getOrDefault(p.queues, 0L) / 1024);
      md.append(String.format(Locale.ROOT, "| (a) peak memory, %s worker (JVM VmHWM / process tree peak RSS) | %d / %d MiB | - | - |%n",
          p.queues, hwm / 1024, treePeakKb.getOrDefault(p.queues, 0L) / 1024));
    }
    notes.append(String.format(Locale.ROOT, "(a) %d runs of the tiny spec (workers/src/test/resources/"
        + "e2e/tiny.json), seeds 100-%d so that no run is a cache hit of another, started at once on "
        + "one dev server with one worker JVM per queue (control, gpu, harness, eval; -Xmx512m each, "
        + "as the e2e tests run them) sharing one artifact store; the drain time is from the first "
        + "start to the last result. Memory: each JVM's VmHWM from /proc/PID/status at the end, and "
        + "the peak of its process tree's summed VmRSS sampled every 250 ms (the sandbox processes a "
        + "worker starts count to it). CPU: user + system time of each worker's process tree over "
        + "(a), from /proc/PID/stat, which the machine's other load does not inflate.%n", n, 100 + n - 1));
  }

  /** (b): one run of {@code rounds} rounds, one RSFT step and two harness iterations each. */
  static void longRun(Workers w, int rounds, StringBuilder md, StringBuilder notes) throws Exception {
    ObjectNode s = (ObjectNode) JSON.readTree(E2e.tinySpec().toFile());
    s.put("name", "bench-long");
    ObjectNode data = (ObjectNode) s.get("data");
    data.put("weightProblems", 8);
    data.put("harnessProblems", 4);
    data.put("testProblems", 4);
    ObjectNode rsft = (ObjectNode) s.get("rsft");
    rsft.put("promptsPerStep", 8); // one step per epoch
    rsft.put("samplesPerPrompt", 2);
    rsft.put("minibatch", 16);
    ObjectNode phases = (ObjectNode) s.get("phases");
    phases.put("weightEpochsPerPhase", 1.0);
    phases.put("weightBudgetEpochs", (double) rounds);
    phases.put("maxRounds", rounds);
    phases.put("harnessIterationsPerPhase", 2);
    ((ObjectNode) s.get("harness")).put("candidatesPerIteration", 1);
    ObjectNode eval = (ObjectNode) s.get("eval");
    eval.put("everyEpochs", 0); // the end-of-phase evaluations only
    eval.put("k", 1);
    s.putObject("workflow").put("continueAsNewAfter", CONTINUE_AS_NEW_AFTER);
    String id = "bench-long";
    long t0 = System.nanoTime();
    WhaleResult r = start(id, SpecJson.parse(JSON.writeValueAsString(s)))
        .getResult(20, TimeUnit.MINUTES, WhaleResult.class);
    double seconds = (System.nanoTime() - t0) / 1e9;
    List<History> histories = RunTree.tree(client, id, false);
    Map<String, Integer> runsPerWorkflow = new LinkedHashMap<>();
    int largest = 0;
    String largestAt = "";
    int largestParent = 0;
    int largestChild = 0;
    int parentEvents = 0; // what one parent history would hold without continue-as-new
    for (History h : histories) {
      runsPerWorkflow.merge(h.workflowId(), 1, Integer::sum);
      if (h.workflowId().equals(id)) {
        largestParent = Math.max(largestParent, h.events().size());
        parentEvents += h.events().size();
      } else {
        largestChild = Math.max(largestChild, h.events().size());
      }
      if (h.events().size() > largest) {
        largest = h.events().size();
        largestAt = h.workflowId();
      }
    }
    long continued = RunTree.count(histories, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
    long children = runsPerWorkflow.size() - 1;
    long parentRuns = runsPerWorkflow.getOrDefault(id, 0);
    long steps = RunTree.completedPerType(histories).getOrDefault("RsftStep", 0);
    System.out.printf("(b) %d rounds, %d steps in %.1f s; %d histories, largest %d events (%s), "
            + "continued as new %d, parent runs %d, children %d%n", r.rounds(), r.steps(), seconds,
        histories.size(), largest, largestAt, continued, parentRuns, children);
    md.append(String.format(Locale.ROOT, "| (b) rounds completed in one run | %d (%d RSFT steps, %d phase child workflows) | at least 30 | %s |%n",
        r.rounds(), steps, children, r.rounds() >= 30 ? "yes" : "no"));
    md.append(String.format(Locale.ROOT, "| (b) largest history of any execution: parent run / phase child | %d / %d events (largest: %s) | under 10 000 | %s |%n",
        largestParent, largestChild, largestAt, largest < 10_000 ? "yes" : "no"));
    md.append(String.format(Locale.ROOT, "| (b) continue-as-new executions | %d (the parent ran as %d executions, %d events in all) | - | - |%n",
        continued, parentRuns, parentEvents));
    notes.append(String.format(Locale.ROOT, "(b) One run on the same workers: the tiny spec at the "
            + "smallest sizes (8 weight problems, 8 prompts x 2 samples per step so one step per "
            + "epoch, one epoch per weight phase, a budget of %d epochs, phases.maxRounds %d, 2 harness "
            + "iterations of 1 candidate, 4 harness and 4 test problems, eval.k 1, no periodic "
            + "evaluation) and workflow.continueAsNewAfter %d (the parent continues as new every %d "
            + "phases); %.0f s. The result says %d rounds and %d steps; %d histories read (every run "
            + "of every workflow in its tree, RunTree.tree), each one's event count from its fetched "
            + "history.%n",
        rounds, rounds, CONTINUE_AS_NEW_AFTER, CONTINUE_AS_NEW_AFTER, seconds, r.rounds(), r.steps(),
        histories.size()));
  }

  /** A field of /proc/PID/status in kB; 0 when the process is gone. */
  static long statusKb(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | RuntimeException e) {
      // the process ended between the listing and the read
    }
    return 0;
  }

  /**
   * CPU seconds (user + system) of a process, the children it waited for, and its live
   * descendants: what the work cost, whatever else shares the cores.
   */
  static double cpuSeconds(long pid) {
    double ticks = 100.0; // USER_HZ on Linux
    return ProcessHandle.of(pid).map(h -> Stream.concat(Stream.of(h), h.descendants())
        .mapToDouble(p -> {
          try {
            String stat = Files.readString(Path.of("/proc/" + p.pid() + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // fields 14-17 of stat (utime stime cutime cstime), counted from the state field (3)
            long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            if (p.pid() == pid) {
              t += Long.parseLong(f[13]) + Long.parseLong(f[14]);
            }
            return t / ticks;
          } catch (IOException | RuntimeException e) {
            return 0; // ended meanwhile
          }
        }).sum()).orElse(0.0);
  }

  /** VmRSS of a process and all its descendants, summed. */
  static long treeRssKb(long pid) {
    return ProcessHandle.of(pid).map(h -> Stream.concat(Stream.of(h), h.descendants())
        .mapToLong(p -> statusKb(p.pid(), "VmRSS:")).sum()).orElse(0L);
  }

  static String load() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (IOException e) {
      return "?";
    }
  }
}
