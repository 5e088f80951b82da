import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.util.Timestamps;
import io.temporal.api.common.v1.Payloads;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.common.metadata.POJOActivityInterfaceMetadata;
import io.temporal.common.metadata.POJOActivityMethodMetadata;
import io.temporal.testing.TestWorkflowEnvironment;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import whale.activities.ActivityRuntime;
import whale.bench.Spread;
import whale.activities.EvalActivitiesImpl;
import whale.activities.HarnessActivitiesImpl;
import whale.activities.ReportActivitiesImpl;
import whale.activities.WeightActivitiesImpl;
import whale.workers.DemoCommand;
import whale.workers.Queue;
import whale.workers.WhaleWorkers;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.ReportActivities;
import whale.workflows.activities.WeightActivities;

/**
 * Orchestration overhead against a bare loop (bench/README.md, figure 1). One seeded run of
 * bench/overhead.json three ways, each with a fresh artifact store (so the activity memo skips
 * nothing) and a fresh activity runtime: (a) whale as users run it, the WHALE workflow and all four
 * workers, on the in-process Java test server and, when a {@code temporal} binary is on the PATH,
 * on the real dev server; (b) a bare loop in one thread, no Temporal: the same activity
 * implementations called in the order the recorded run scheduled them, with the recorded inputs.
 * Each (b) result must equal the one recorded, so (b) computes exactly what (a) did.
 * A warm-up run (not timed) records the calls; then the variants are timed round-robin, repeats
 * times, the order rotated each repeat. Usage: bench/overhead.sh [repeats] [spec.json]
 */
public class OverheadBench {
  static final DataConverter CONVERTER = DefaultDataConverter.STANDARD_INSTANCE;
  static final ObjectMapper JSON = new ObjectMapper();

  /** One activity execution as the history recorded it. */
  record Call(long scheduledNanos, String workflow, long eventId, String type, String taskQueue,
      Payloads input, Payloads result, long startedNanos, long closedNanos) {}

  /** What one timed run gave. */
  record Run(String variant, double wallSeconds, double bestMeanAt8, String checkpointRef,
      double idleShare, Map<String, List<Double>> scheduleToStartMs, int activities) {}

  public static void main(String[] args) throws Exception {
    int repeats = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path specFile = Path.of(args.length > 1 ? args[1] : "bench/overhead.json");
    ExperimentSpec spec = SpecJson.parse(Files.readString(specFile));
    Path work = Files.createTempDirectory("whale-overhead-");
    Optional<Path> temporal = DemoCommand.findOnPath("temporal");

    // warm-up: JIT, DJL's natives, the sandbox; its history is the call list the bare loop runs
    List<Call> calls = new ArrayList<>();
    Run warm = temporalRun("warm-up", spec, work.resolve("warm-up"), Optional.empty(), calls);
    System.out.printf(Locale.ROOT, "warm-up: %.1f s, %d activities, best mean@8 %.4f%n",
        warm.wallSeconds(), calls.size(), warm.bestMeanAt8());

    List<String> variants = new ArrayList<>(List.of("test server", "bare loop"));
    if (temporal.isPresent()) {
      variants.add(1, "dev server");
    }
    Map<String, List<Run>> runs = new TreeMap<>();
    for (int r = 0; r < repeats; r++) {
      for (int k = 0; k < variants.size(); k++) {
        String v = variants.get((k + r) % variants.size());
        Path store = work.resolve("r" + r + "-" + v.replace(' ', '-'));
        Run run = switch (v) {
          case "bare loop" -> bareLoop(calls, store, warm);
          case "dev server" -> temporalRun(v, spec, store, temporal, null);
          default -> temporalRun(v, spec, store, Optional.empty(), null);
        };
        System.out.printf(Locale.ROOT, "repeat %d %-11s %7.2f s  best mean@8 %.4f  checkpoint %s%n",
            r, v, run.wallSeconds(), run.bestMeanAt8(), run.checkpointRef());
        runs.computeIfAbsent(v, x -> new ArrayList<>()).add(run);
      }
    }
    report(spec, warm, runs, repeats, calls.size());
  }

  /** One WHALE run through Temporal; records its activity calls into {@code record} if given. */
  static Run temporalRun(String variant, ExperimentSpec spec, Path store, Optional<Path> temporal,
      List<Call> record) throws Exception {
    ActivityRuntime runtime = ActivityRuntime.open(store);
    try (TestWorkflowEnvironment env = DemoCommand.environment(temporal)) {
      WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
      env.start();
      WorkflowClient client = env.getWorkflowClient();
      String id = "overhead-" + variant.replace(' ', '-') + "-" + store.getFileName();
      WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
          .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id).build());
      long t0 = System.nanoTime();
      WhaleResult result = wf.run(spec, null);
      double wall = (System.nanoTime() - t0) / 1e9;
      List<Call> calls = new ArrayList<>();
      Map<String, List<Double>> s2s = new TreeMap<>();
      long[] span = collect(client, id, calls, s2s);
      calls.sort(Comparator.comparingLong(Call::scheduledNanos).thenComparing(Call::workflow)
          .thenComparingLong(Call::eventId));
      if (record != null) {
        record.addAll(calls);
      }
      return new Run(variant, wall, result.bestMeanAt8(), result.checkpointRef(),
          idleShare(calls, span[0], span[1]), s2s, calls.size());
    } finally {
      closeEpisodes(runtime);
    }
  }

  /**
   * The run's executions (the run, then its phase children), their activity calls, the
   * schedule-to-start latencies per task queue (workflow tasks under "QUEUE (workflow tasks)"),
   * and the run's first and last event times.
   */
  static long[] collect(WorkflowClient client, String id, List<Call> calls,
      Map<String, List<Double>> s2s) {
    long[] span = {Long.MAX_VALUE, Long.MIN_VALUE};
    List<String> ids = new ArrayList<>(List.of(id));
    for (int i = 0; i < ids.size(); i++) {
      String w = ids.get(i);
      Map<Long, HistoryEvent> scheduled = new HashMap<>();
      Map<Long, Long> started = new HashMap<>();
      String workflowQueue = null;
      long workflowTaskScheduled = 0;
      for (HistoryEvent e : client.fetchHistory(w).getEvents()) {
        long t = Timestamps.toNanos(e.getEventTime());
        if (i == 0) {
          span[0] = Math.min(span[0], t);
          span[1] = Math.max(span[1], t);
        }
        switch (e.getEventType()) {
          case EVENT_TYPE_WORKFLOW_EXECUTION_STARTED -> workflowQueue =
              e.getWorkflowExecutionStartedEventAttributes().getTaskQueue().getName();
          case EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW -> throw new IllegalStateException(
              w + " continued as new: this benchmark reads one execution per workflow; use a smaller spec");
          case EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED ->
              ids.add(e.getStartChildWorkflowExecutionInitiatedEventAttributes().getWorkflowId());
          case EVENT_TYPE_WORKFLOW_TASK_SCHEDULED -> workflowTaskScheduled = t;
          case EVENT_TYPE_WORKFLOW_TASK_STARTED -> s2s.computeIfAbsent(
              workflowQueue + " (workflow tasks)", q -> new ArrayList<>())
              .add((t - workflowTaskScheduled) / 1e6);
          case EVENT_TYPE_ACTIVITY_TASK_SCHEDULED -> scheduled.put(e.getEventId(), e);
          case EVENT_TYPE_ACTIVITY_TASK_STARTED -> {
            var a = e.getActivityTaskStartedEventAttributes();
            started.put(a.getScheduledEventId(), t);
            if (a.getAttempt() > 1) {
              throw new IllegalStateException(w + ": an activity was retried (attempt "
                  + a.getAttempt() + "): the timing is not of a clean run");
            }
          }
          case EVENT_TYPE_ACTIVITY_TASK_COMPLETED -> {
            var a = e.getActivityTaskCompletedEventAttributes();
            HistoryEvent s = scheduled.get(a.getScheduledEventId());
            var sa = s.getActivityTaskScheduledEventAttributes();
            long sched = Timestamps.toNanos(s.getEventTime());
            long start = started.get(a.getScheduledEventId());
            calls.add(new Call(sched, w, s.getEventId(), sa.getActivityType().getName(),
                sa.getTaskQueue().getName(), sa.getInput(), a.getResult(), start, t));
            s2s.computeIfAbsent(sa.getTaskQueue().getName(), q -> new ArrayList<>())
                .add((start - sched) / 1e6);
          }
          case EVENT_TYPE_ACTIVITY_TASK_FAILED, EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT ->
              throw new IllegalStateException(w + ": an activity failed: " + e);
          default -> { }
        }
      }
    }
    return span;
  }

  /** The share of [first, last] during which no activity of the run was executing. */
  static double idleShare(List<Call> calls, long first, long last) {
    List<long[]> spans = new ArrayList<>();
    for (Call c : calls) {
      spans.add(new long[] {c.startedNanos(), c.closedNanos()});
    }
    spans.sort(Comparator.comparingLong(s -> s[0]));
    long busy = 0;
    long end = Long.MIN_VALUE;
    for (long[] s : spans) {
      long from = Math.max(s[0], end);
      if (s[1] > from) {
        busy += s[1] - from;
      }
      end = Math.max(end, s[1]);
    }
    return 1.0 - (double) busy / (last - first);
  }

  /** The recorded calls in one thread against fresh activity implementations: no Temporal. */
  static Run bareLoop(List<Call> calls, Path store, Run recorded) throws Exception {
    ActivityRuntime runtime = ActivityRuntime.open(store);
    try {
      Map<String, Object> impls = new HashMap<>();
      Map<String, Method> methods = new HashMap<>();
      bind(WeightActivities.class, new WeightActivitiesImpl(runtime), impls, methods);
      bind(EvalActivities.class, new EvalActivitiesImpl(runtime), impls, methods);
      bind(HarnessActivities.class, new HarnessActivitiesImpl(runtime), impls, methods);
      bind(ReportActivities.class, new ReportActivitiesImpl(runtime), impls, methods);
      // decoding the recorded inputs is the benchmark's bookkeeping, not the loop's work
      List<Object[]> inputs = new ArrayList<>();
      for (Call c : calls) {
        Method m = methods.get(c.type());
        if (m == null) {
          throw new IllegalStateException("no implementation of activity " + c.type());
        }
        Object[] a = new Object[m.getParameterCount()];
        for (int i = 0; i < a.length; i++) {
          a[i] = CONVERTER.fromPayloads(i, Optional.of(c.input()), m.getParameterTypes()[i],
              m.getGenericParameterTypes()[i]);
        }
        inputs.add(a);
      }
      List<Object> outputs = new ArrayList<>(calls.size());
      Map<String, Double> seconds = new TreeMap<>();
      long t0 = System.nanoTime();
      for (int i = 0; i < calls.size(); i++) {
        Call c = calls.get(i);
        long t = System.nanoTime();
        outputs.add(methods.get(c.type()).invoke(impls.get(c.type()), inputs.get(i)));
        seconds.merge(c.type(), (System.nanoTime() - t) / 1e9, Double::sum);
      }
      double wall = (System.nanoTime() - t0) / 1e9;
      System.out.println("bare loop seconds per activity type: " + seconds);
      for (int i = 0; i < calls.size(); i++) {
        Call c = calls.get(i);
        JsonNode want = json(Optional.of(c.result()));
        JsonNode have = json(CONVERTER.toPayloads(outputs.get(i)));
        if (!want.equals(have)) {
          throw new IllegalStateException("the bare loop's " + c.type() + " (call " + i + " of "
              + calls.size() + ", " + c.workflow() + ") returned " + have + ", the workflow's " + want);
        }
      }
      return new Run("bare loop", wall, recorded.bestMeanAt8(), recorded.checkpointRef(), 0,
          Map.of(), calls.size());
    } finally {
      closeEpisodes(runtime);
    }
  }

  static JsonNode json(Optional<Payloads> p) throws Exception {
    return JSON.readTree(p.filter(x -> x.getPayloadsCount() > 0)
        .map(x -> x.getPayloads(0).getData().toStringUtf8()).orElse("null"));
  }

  static void bind(Class<?> iface, Object impl, Map<String, Object> impls, Map<String, Method> methods) {
    for (POJOActivityMethodMetadata m : POJOActivityInterfaceMetadata.newInstance(iface).getMethodsMetadata()) {
      impls.put(m.getActivityTypeName(), impl);
      methods.put(m.getActivityTypeName(), m.getMethod());
    }
  }

  /** The runtime's sandbox processes end with it, not with this JVM: the next run gets fresh ones. */
  static void closeEpisodes(ActivityRuntime runtime) throws Exception {
    runtime.episodes().close();
  }

  static void report(ExperimentSpec spec, Run warm, Map<String, List<Run>> runs, int repeats,
      int activities) throws Exception {
    List<Run> bare = runs.get("bare loop");
    StringBuilder md = new StringBuilder();
    md.append("## 1. Orchestration overhead against a bare loop\n\n");
    md.append("| figure | measured | goal | met |\n|---|---|---|---|\n");
    boolean equal = true;
    for (String v : runs.keySet()) {
      for (Run r : runs.get(v)) {
        equal &= r.bestMeanAt8() == warm.bestMeanAt8() && r.checkpointRef().equals(warm.checkpointRef());
      }
    }
    for (String v : runs.keySet()) {
      if (v.equals("bare loop")) {
        continue;
      }
      List<Run> rs = runs.get(v);
      List<Double> ratios = new ArrayList<>();
      for (int i = 0; i < rs.size(); i++) {
        ratios.add(rs.get(i).wallSeconds() / bare.get(i).wallSeconds());
      }
      double med = Spread.median(ratios);
      md.append(String.format(Locale.ROOT, "| wall(%s) / wall(bare loop) | %s | <= 1.02 | %s |%n",
          v, Spread.of(ratios, "%.3f"), med <= 1.02 ? "yes" : "no"));
    }
    for (String v : runs.keySet()) {
      md.append(String.format(Locale.ROOT, "| wall, %s (s) | %s | | |%n", v,
          Spread.of(runs.get(v).stream().map(Run::wallSeconds).toList(), "%.1f")));
    }
    for (String v : runs.keySet()) {
      if (v.equals("bare loop")) {
        continue;
      }
      md.append(String.format(Locale.ROOT, "| %s: share of wall time with no activity running | %s | | |%n",
          v, Spread.of(runs.get(v).stream().map(Run::idleShare).toList(), "%.3f")));
      Map<String, List<Double>> s2s = new TreeMap<>();
      for (Run r : runs.get(v)) {
        r.scheduleToStartMs().forEach((q, xs) -> s2s.computeIfAbsent(q, x -> new ArrayList<>()).addAll(xs));
      }
      for (var e : s2s.entrySet()) {
        md.append(String.format(Locale.ROOT,
            "| %s: schedule-to-start, %s (ms) | p50 %.1f, p99 %.1f (n=%d) | | |%n",
            v, e.getKey(), Spread.quantile(e.getValue(), 0.5), Spread.quantile(e.getValue(), 0.99), e.getValue().size()));
      }
    }
    md.append(String.format(Locale.ROOT, "| same result in every run | %s | equal | %s |%n",
        "best mean@8 " + warm.bestMeanAt8() + ", checkpoint " + warm.checkpointRef(),
        equal ? "yes" : "NO"));
    md.append(String.format(Locale.ROOT, "%nSpec `%s` (%s task): %d activities per run. Each variant"
        + " ran %d times, interleaved, after one untimed warm-up, each with a fresh artifact store and"
        + " activity runtime (sandboxed episodes, 2 processes). (a) is timed from the workflow start to"
        + " its result; (b) from its first call to its last. Every bare-loop activity result equalled"
        + " the recorded one. Idle share: the time from the run's first to its last history event"
        + " covered by no activity's started-to-completed span. Schedule-to-start pools every timed"
        + " run's tasks.%n%n", spec.name(), spec.task(), activities, repeats));
    String out = System.getenv().getOrDefault("BENCH_OUT", "/dev/stdout");
    Files.writeString(Path.of(out), md.toString(), java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    if (!equal) {
      throw new IllegalStateException("the runs disagree: see the table");
    }
  }
}
