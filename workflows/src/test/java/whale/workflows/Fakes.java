package whale.workflows;

import io.temporal.activity.Activity;
import io.temporal.activity.ActivityInfo;
import io.temporal.testing.TestWorkflowEnvironment;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.IntToDoubleFunction;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.MeanAtKResult;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.ReportActivities;
import whale.workflows.activities.ReportRequest;
import whale.workflows.activities.RetainRequest;
import whale.workflows.activities.RetainResult;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.activities.WeightActivities;

/**
 * The fast tier's activities: one small deterministic fake per activity interface, scripted by the
 * test, registered on whale's real task queues beside the real workflow implementations.
 *
 * <p>Every reference is a pure function of its request (sha256 of it), as the real activities'
 * memo makes them, so identical requests from different runs get identical checkpoints. The fakes
 * remember which RSFT step made each checkpoint and which harness each reference names, so that the
 * script speaks in steps and harness names: test mean@k per (step, harness), D_harness score per
 * candidate name, training reward per step. They check what they are given (a step must train on the
 * previous step's checkpoint, every reference must be one they made) and fail with
 * IllegalArgumentException, which whale's retry options do not retry, so a workflow that passes the
 * wrong state fails its test at once.
 *
 * <p>Each call is recorded with the calling workflow's id and a short line ("step 3 @r1i2c2",
 * "test 2@h0: step 2 (0.50 epochs)", "score r1i2c1 @2", "propose r1 i2"); {@link #lines} gives one
 * run's lines in order. A test may hold a call at its line ({@link #holdAt}) to signal or update the
 * run while that activity is in flight.
 */
final class Fakes {
  /** A scripted D_harness result of one harness. */
  record Score(double success, double meanTurns) {}

  /** Test mean@k of the checkpoint of {@code step} under {@code harness}; {@code seed} is the request's. */
  @FunctionalInterface
  interface TestScript {
    double meanAt(int step, String harness, long seed);
  }

  /** One activity call: the workflow that made it, its line, its request and what the fake answered. */
  record Call(String workflowId, String line, Object request, Object result) {}

  // --- the script (set before starting a run) ---
  volatile IntToDoubleFunction trainReward = step -> 0.5;
  volatile TestScript testMean = (step, harness, seed) -> Math.min(1.0, 0.1 + 0.05 * step);
  volatile BiFunction<String, Integer, Score> harnessScore = (name, step) -> new Score(0.3, 2.0);
  /** Candidate names the proposer writes invalid (they fail validation, so they are never scored). */
  final Set<String> invalid = ConcurrentHashMap.newKeySet();
  volatile boolean invalidH0;

  final Weight weight = new Weight();
  final Eval eval = new Eval();
  final Harness harness = new Harness();
  final Report report = new Report();

  private final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
  private final List<String> retried = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, Integer> stepOf = new ConcurrentHashMap<>();
  private final Map<String, String> nameOf = new ConcurrentHashMap<>();
  private final Map<String, Gate> gates = new ConcurrentHashMap<>();

  /** The real workflows on whale-control, the fakes on whale-gpu, whale-eval and whale-harness; starts. */
  void register(TestWorkflowEnvironment env) {
    env.newWorker(WhaleWorkflow.TASK_QUEUE).registerWorkflowImplementationTypes(
        WhaleWorkflowImpl.class, WeightPhaseWorkflowImpl.class, HarnessSearchWorkflowImpl.class,
        ComparisonWorkflowImpl.class);
    env.newWorker(WeightActivities.TASK_QUEUE).registerActivitiesImplementations(weight);
    env.newWorker(EvalActivities.TASK_QUEUE).registerActivitiesImplementations(eval);
    env.newWorker(HarnessActivities.TASK_QUEUE).registerActivitiesImplementations(harness, report);
    env.start();
  }

  // --- scripting helpers ---

  /** Test mean@k from a table keyed "step@harness" ("2@r1i2c2"); any other evaluation fails the run. */
  static TestScript table(Map<String, Double> means) {
    return (step, harness, seed) -> {
      Double m = means.get(step + "@" + harness);
      if (m == null) {
        throw new IllegalArgumentException("no scripted test mean@k for " + step + "@" + harness);
      }
      return m;
    };
  }

  /** D_harness scores by candidate name; names not listed score {@code fallback}. */
  static BiFunction<String, Integer, Score> scores(Map<String, Score> byName, Score fallback) {
    return (name, step) -> byName.getOrDefault(name, fallback);
  }

  /** Training reward per step (1-based), from a list. */
  static IntToDoubleFunction rewards(double... perStep) {
    return step -> {
      if (step < 1 || step > perStep.length) {
        throw new IllegalArgumentException("no scripted training reward for step " + step);
      }
      return perStep[step - 1];
    };
  }

  // --- what happened ---

  /**
   * The lines of one run (its workflow and its phase children, retention calls left out), in the
   * order the activities ran; the candidates an iteration scores in parallel are sorted by name.
   */
  List<String> lines(String runId) {
    List<String> out = new ArrayList<>();
    List<String> parallel = new ArrayList<>();
    for (Call c : calls(runId)) {
      if (c.line().equals("retain")) {
        continue;
      }
      if (c.line().startsWith("score ")) {
        parallel.add(c.line());
        continue;
      }
      flush(parallel, out);
      out.add(c.line());
    }
    flush(parallel, out);
    return out;
  }

  private static void flush(List<String> parallel, List<String> out) {
    Collections.sort(parallel);
    out.addAll(parallel);
    parallel.clear();
  }

  /** The lines of one run that start with {@code prefix}. */
  List<String> lines(String runId, String prefix) {
    return lines(runId).stream().filter(l -> l.startsWith(prefix)).toList();
  }

  /** Every call of one run (its workflow id, or an id under it), in order. */
  List<Call> calls(String runId) {
    synchronized (calls) {
      return calls.stream().filter(c -> c.workflowId().equals(runId)
          || c.workflowId().startsWith(runId + "/")).toList();
    }
  }

  /** The requests of one run's calls of {@code type}. */
  <T> List<T> requests(String runId, Class<T> type) {
    return calls(runId).stream().map(Call::request).filter(type::isInstance).map(type::cast).toList();
  }

  /** The checkpoint the fakes made for step {@code step} of run {@code runId} (0: its base). */
  String checkpoint(String runId, int step) {
    for (Call c : calls(runId)) {
      if (step == 0 && c.line().equals("base")) {
        return (String) c.result();
      }
      if (c.result() instanceof RsftStepResult r && c.line().startsWith("step " + step + " ")) {
        return r.checkpointRef();
      }
    }
    throw new AssertionError("run " + runId + " made no checkpoint for step " + step);
  }

  /** A checkpoint or harness reference as the script names it: "base", "c3", "h0", "r1i2c2". */
  String name(String ref) {
    Integer step = stepOf.get(ref);
    return step != null ? (step == 0 ? "base" : "c" + step) : nameOf.getOrDefault(ref, ref);
  }

  /** Activity attempts after the first (whale's fakes never fail, so each is a test problem). */
  List<String> retried() {
    return List.copyOf(retried);
  }

  /** Holds the next call whose line is {@code line} until the gate is released. */
  Gate holdAt(String line) {
    Gate g = new Gate(line);
    gates.put(line, g);
    return g;
  }

  static final class Gate {
    private final String line;
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    private Gate(String line) {
      this.line = line;
    }

    /** Waits until the held activity is running. */
    void awaitEntered() throws InterruptedException {
      if (!entered.await(20, TimeUnit.SECONDS)) {
        throw new AssertionError("no activity reached '" + line + "'");
      }
    }

    void release() {
      released.countDown();
    }
  }

  // --- the fakes ---

  private <T> T record(Object request, String line, T result) {
    ActivityInfo info = Activity.getExecutionContext().getInfo();
    if (info.getAttempt() > 1) {
      retried.add(line + " (attempt " + info.getAttempt() + ")");
    }
    calls.add(new Call(info.getWorkflowId(), line, request, result));
    Gate g = gates.remove(line);
    if (g != null) {
      g.entered.countDown();
      try {
        if (!g.released.await(20, TimeUnit.SECONDS)) {
          throw new IllegalStateException("gate '" + line + "' never released");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return result;
  }

  static String ref(String content) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(content.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(h);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private int step(String checkpointRef) {
    Integer s = stepOf.get(checkpointRef);
    if (s == null) {
      throw new IllegalArgumentException("not a checkpoint the fakes made: " + checkpointRef);
    }
    return s;
  }

  private String harnessName(String harnessRef) {
    String n = nameOf.get(harnessRef);
    if (n == null) {
      throw new IllegalArgumentException("not a harness the fakes wrote: " + harnessRef);
    }
    return n;
  }

  final class Weight implements WeightActivities {
    @Override
    public String prepareBaseModel(BaseModelRequest request) {
      String ref = ref("base " + request);
      stepOf.put(ref, 0);
      return record(request, "base", ref);
    }

    @Override
    public RsftStepResult rsftStep(RsftStepRequest r) {
      int from = step(r.checkpointRef());
      if (from != r.step() - 1) {
        throw new IllegalArgumentException("step " + r.step() + " trains on the checkpoint of step " + from);
      }
      String ref = ref("step " + r);
      stepOf.put(ref, r.step());
      int rollouts = r.problems().size() * r.samplesPerPrompt();
      int accepted = rollouts / 2;
      RsftStepResult result = new RsftStepResult(ref, trainReward.applyAsDouble(r.step()), accepted,
          rollouts, accepted, 1.0 / r.step(), ref("rollouts " + r));
      return record(r, "step " + r.step() + " @" + harnessName(r.harnessRef()), result);
    }

    @Override
    public RetainResult retainCheckpoints(RetainRequest request) {
      return record(request, "retain", new RetainResult(request.released(), List.of(), 0));
    }
  }

  final class Eval implements EvalActivities {
    @Override
    public MeanAtKResult evaluate(EvalRequest r) {
      int step = step(r.checkpointRef());
      String name = harnessName(r.harnessRef());
      switch (r.split()) {
        case HARNESS -> {
          Score s = harnessScore.apply(name, step);
          int problems = r.task().harnessProblems();
          return record(r, "score " + name + " @" + step, new MeanAtKResult(s.success(), s.success(),
              s.success(), s.meanTurns(), r.k(), problems, problems * r.k(), ref("traces " + r)));
        }
        case TEST -> {
          double mean = testMean.meanAt(step, name, r.seed());
          int problems = r.task().testProblems();
          return record(r, "test " + step + "@" + name + ": " + r.label(), new MeanAtKResult(mean,
              Math.min(1.0, mean + 0.1), mean, 1.0, r.k(), problems, problems * r.k(),
              ref("traces " + r)));
        }
        default -> throw new IllegalArgumentException("unknown split " + r.split());
      }
    }
  }

  final class Harness implements HarnessActivities {
    @Override
    public CandidateInfo initialHarness(TaskRef task, String form) {
      String ref = ref("h0 " + task + " " + form);
      nameOf.put(ref, "h0");
      return record(task, "h0", new CandidateInfo("h0", "the task's starting harness", "", "none",
          ref, !invalidH0, invalidH0 ? "scripted: h0 does not compile" : null));
    }

    /** Candidates "r{round}i{iteration}c{j}", the round read from the phase's workflow id. */
    @Override
    public List<CandidateInfo> propose(ProposeRequest r) {
      String phase = r.phaseKey().substring(r.phaseKey().lastIndexOf('/') + 1); // "r1-harness"
      String round = phase.substring(0, phase.indexOf('-'));
      harnessName(r.incomingRef());
      List<CandidateInfo> out = new ArrayList<>();
      for (int j = 1; j <= r.candidates(); j++) {
        String name = round + "i" + r.iteration() + "c" + j;
        // what the source would hold: not the phase's workflow id, so that identical runs agree
        String ref = ref("candidate " + name + " seed " + r.seed() + " from " + r.incomingRef()
            + (r.promptOnly() ? " prompt-only" : ""));
        nameOf.put(ref, name);
        boolean valid = !invalid.contains(name);
        out.add(new CandidateInfo(name, "hypothesis " + name, r.promptOnly() ? "prompt text" : "code",
            r.promptOnly() ? "prompt" : "any", ref, valid, valid ? null : "scripted: does not compile"));
      }
      return record(r, "propose " + round + " i" + r.iteration() + (r.promptOnly() ? " prompt-only" : ""),
          List.copyOf(out));
    }
  }

  final class Report implements ReportActivities {
    @Override
    public ComparisonReport render(ReportRequest r) {
      return record(r, "render", new ComparisonReport(r.runs().size() + " runs of " + r.title(),
          ref("png " + r), ref("html " + r), "/reports/" + r.reportKey() + "/plot.png",
          "/reports/" + r.reportKey() + "/index.html"));
    }
  }
}
