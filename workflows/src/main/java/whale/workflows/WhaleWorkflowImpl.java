package whale.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import io.temporal.api.enums.v1.ParentClosePolicy;
import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.ChildWorkflowOptions;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.Limits;
import whale.workflows.schedule.PatienceRule;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.PhasePlanner;
import whale.workflows.schedule.Retention;
import whale.workflows.schedule.Seeds;

/**
 * The parent of a WHALE run. It decides the phases ({@link PhasePlanner}), runs each as a child
 * workflow, forwards the user's controls to the running child, evaluates on D_test after each phase
 * and continues as new between phases when Temporal suggests it (or every
 * {@code workflow.continueAsNewAfter} phases). Deterministic: all randomness is seeds derived from the
 * spec, all work is activities, and only references travel through history.
 */
public class WhaleWorkflowImpl implements WhaleWorkflow {
  /** A control to pass to the running phase: a signal name and, for "limits", the new limits. */
  private record Control(String signal, Limits limits) {}

  private ExperimentSpec spec;
  private Limits limits;
  private String phase = "starting";
  private PhasePlanner.Kind lastPhase;
  private boolean paused;
  private boolean stopRequested;
  private boolean switchRequested;
  private boolean ended;
  private int round;
  private int steps;
  private int harnessIteration;
  private long rollouts;
  private long testRollouts;
  private String checkpointRef;
  private CandidateInfo harness;
  private PersistentSampler.Position sampler = PersistentSampler.Position.START;
  private double baseMeanAt8 = Double.NaN;
  private List<RunEvent> events = new ArrayList<>();
  private List<RunEvent> evaluations = new ArrayList<>();
  private int continuedAsNew;
  private String phaseWorkflowId;
  private int progressSeq;
  /** Null in a run recorded before checkpoint retention: it keeps every checkpoint, as it did. */
  private Retention retention;
  private boolean retaining;
  private final Deque<Control> controls = new ArrayDeque<>();
  /** Why recent signal payloads were ignored (signals cannot be refused, so the status says). */
  private final Deque<String> rejected = new ArrayDeque<>();
  private static final int KEPT_REJECTIONS = 20;

  @Override
  public WhaleResult run(ExperimentSpec input, WhaleState resume) {
    List<String> problems = SpecValidator.problems(input);
    if (!problems.isEmpty()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "invalid experiment spec: " + String.join("; ", problems), "InvalidSpec");
    }
    spec = input;
    // Versioned: histories recorded before retention replay without its activities.
    retaining = Workflow.getVersion("checkpoint-retention", Workflow.DEFAULT_VERSION, 1) >= 1;
    // Versioned too: cells recorded before it deleted what they released at once, and a sibling
    // cell's memo hit on a deleted checkpoint recomputed it (issue 24).
    boolean deferring = retaining
        && Workflow.getVersion("deferred-release", Workflow.DEFAULT_VERSION, 1) >= 1
        && Workflow.getInfo().getParentWorkflowId().isPresent();
    if (resume == null) {
      limits = Limits.of(spec);
      startBase();
    } else {
      restore(resume);
    }
    if (deferring && retention != null) {
      retention = retention.withDeferredRelease(); // its phase children see it in the retention
    }
    retention = WorkflowStubs.retain(retention);

    for (int phasesThisRun = 0; ; phasesThisRun++) {
      Workflow.await(() -> !paused || stopRequested);
      if (stopRequested) {
        break;
      }
      PhasePlanner.Phase next = limits.planner(spec.scheduleKind())
          .next(new PhasePlanner.Progress(round, steps, lastPhase));
      if (next.kind() == PhasePlanner.Kind.DONE) {
        break;
      }
      if (PhaseReporter.continueAsNewDue(spec, phasesThisRun)) {
        Workflow.await(Workflow::isEveryHandlerFinished);
        Workflow.continueAsNew(spec, snapshot());
      }
      round = next.round();
      if (next.kind() == PhasePlanner.Kind.WEIGHT) {
        weightPhase(next);
      } else {
        harnessPhase(next);
      }
      switchRequested = false; // a switch signalled between phases applied to the phase just run
      lastPhase = next.kind();
      evaluateTest("round " + round + " " + phase + " end");
      retention = WorkflowStubs.retain(retention);
    }
    ended = true;
    enterPhase("done");
    RunEvent best = best();
    return new WhaleResult(spec.name(), spec.schedule(), baseMeanAt8, best.meanAt8(), label(best),
        best.rollouts(), rollouts, testRollouts, round, steps, stopRequested, checkpointRef,
        harness.sourceRef(), harness.name(), List.copyOf(evaluations),
        retention == null ? List.of() : retention.deferred());
  }

  /** Pretrain the base model, write h0, evaluate both: the reference every schedule starts from. */
  private void startBase() {
    enterPhase("base");
    checkpointRef = WorkflowStubs.weight("pretrain the base model")
        .prepareBaseModel(BaseModelRequest.of(spec, TaskRef.of(spec),
            Seeds.mix(spec.seed(), SeedStreams.PRETRAIN)));
    if (retaining) {
      retention = Retention.start(Workflow.getInfo().getWorkflowId(), spec.checkpoints().keepLast(),
          checkpointRef);
    }
    harness = WorkflowStubs.harness("write the initial harness h0").initialHarness(TaskRef.of(spec),
        spec.harness().initialForm());
    if (!harness.valid()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "the task's initial harness is invalid: " + harness.error(), "InvalidHarness");
    }
    evaluateTest("base");
    baseMeanAt8 = evaluations.get(0).meanAt8();
  }

  private void weightPhase(PhasePlanner.Phase p) {
    enterPhase("weight");
    controls.clear(); // the run never starts a phase while paused or stopping: nothing to pass on
    String id = Workflow.getInfo().getWorkflowId() + "/r" + round + "-weight";
    WeightPhaseWorkflow child = Workflow.newChildWorkflowStub(WeightPhaseWorkflow.class,
        childOptions(id, String.format(Locale.ROOT, "weight phase, round %d (%s)", round,
            p.adaptiveWeight() ? "until patience" : "to step " + p.stepLimit())));
    WeightPhaseInput in = new WeightPhaseInput(spec, round, p.stepLimit(), p.adaptiveWeight(), limits,
        harness, checkpointRef, steps, sampler, rollouts, testRollouts, PatienceRule.State.START,
        List.of(), List.of(), false, switchRequested, false, 0, retention);
    int eventsAt = events.size();
    int evaluationsAt = evaluations.size();
    WeightPhaseResult r = follow(id, Async.function(child::run, in), child);
    // The result is the authority: it replaces the live progress reports.
    truncate(eventsAt, evaluationsAt);
    events.addAll(r.events());
    evaluations.addAll(r.evaluations());
    checkpointRef = r.checkpointRef();
    if (retention != null) {
      retention = r.retention().phaseEnd(checkpointRef);
    }
    steps = r.steps();
    sampler = r.sampler();
    rollouts = r.rollouts();
    testRollouts = r.testRollouts();
    publish();
  }

  private void harnessPhase(PhasePlanner.Phase p) {
    enterPhase("harness");
    controls.clear();
    String id = Workflow.getInfo().getWorkflowId() + "/r" + round + "-harness";
    HarnessSearchWorkflow child = Workflow.newChildWorkflowStub(HarnessSearchWorkflow.class,
        childOptions(id, String.format(Locale.ROOT, "harness search, round %d (%s%s)", round,
            p.harnessRule() == null ? p.iterations() + " iterations" : "adaptive",
            p.promptOnly() ? ", prompt only" : "")));
    HarnessSearchInput in = new HarnessSearchInput(spec, round, p.iterations(),
        p.harnessRule() != null, p.promptOnly(), limits, checkpointRef, harness, rollouts, List.of(),
        0, Double.NEGATIVE_INFINITY, 0, List.of(), false, switchRequested, false, 0);
    int eventsAt = events.size();
    HarnessSearchResult r = follow(id, Async.function(child::run, in), child);
    truncate(eventsAt, evaluations.size());
    events.addAll(r.events());
    harness = r.winner();
    rollouts = r.rollouts();
    harnessIteration = 0;
    publish();
  }

  /**
   * Waits for the phase child, passing on the user's controls as they arrive. Signals go by workflow
   * id alone, so they reach the child's current run even after it continued as new.
   */
  private <R> R follow(String id, Promise<R> result, Object childStub) {
    phaseWorkflowId = id;
    progressSeq = 0;
    Workflow.getWorkflowExecution(childStub).get(); // started: signals can reach it
    while (true) {
      Workflow.await(() -> result.isCompleted() || !controls.isEmpty());
      while (!controls.isEmpty() && !result.isCompleted()) {
        Control c = controls.poll();
        try {
          if (c.limits() != null) {
            Workflow.newUntypedExternalWorkflowStub(id).signal(c.signal(), c.limits());
          } else {
            Workflow.newUntypedExternalWorkflowStub(id).signal(c.signal());
          }
        } catch (RuntimeException e) {
          // The phase ended meanwhile; its result below is what counts.
          Workflow.getLogger(WhaleWorkflowImpl.class).info("control {} not delivered to {}: {}",
              c.signal(), id, e.toString());
        }
      }
      if (result.isCompleted()) {
        controls.clear();
        phaseWorkflowId = null;
        return result.get();
      }
    }
  }

  private ChildWorkflowOptions childOptions(String id, String summary) {
    return ChildWorkflowOptions.newBuilder()
        .setWorkflowId(id)
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE)
        .setParentClosePolicy(ParentClosePolicy.PARENT_CLOSE_POLICY_TERMINATE)
        .setStaticSummary(summary)
        .build();
  }

  private void truncate(int eventsAt, int evaluationsAt) {
    events = new ArrayList<>(events.subList(0, Math.min(eventsAt, events.size())));
    evaluations = new ArrayList<>(evaluations.subList(0, Math.min(evaluationsAt, evaluations.size())));
  }

  /**
   * Test mean@k at a phase end, unless the phase's periodic evaluation just measured this very
   * checkpoint and harness in the same phase.
   */
  private void evaluateTest(String label) {
    if (!evaluations.isEmpty()) {
      RunEvent last = evaluations.get(evaluations.size() - 1);
      if (last.round() == round && last.phase().equals(phase)
          && last.checkpointRef().equals(checkpointRef) && last.harnessRef().equals(harness.sourceRef())) {
        return;
      }
    }
    SeedStreams.Evaluated t = SeedStreams.testEval(spec, round == 0 ? "base" : phase, round, steps,
        rollouts, checkpointRef, harness.sourceRef(), label);
    testRollouts += t.rollouts();
    events.add(t.event());
    evaluations.add(t.event());
    if (retention != null) {
      retention = retention.evaluated(checkpointRef, t.event().meanAt8());
    }
    publish();
  }

  /** The best test evaluation so far: highest mean@k, the earliest on ties. */
  private RunEvent best() {
    RunEvent best = null;
    for (RunEvent e : evaluations) {
      if (best == null || e.meanAt8() > best.meanAt8()) {
        best = e;
      }
    }
    return best;
  }

  private static String label(RunEvent e) {
    return e == null ? "" : e.round() == 0 ? "base"
        : String.format(Locale.ROOT, "round %d %s, step %d", e.round(), e.phase(), e.step());
  }

  /** Search attributes and the Web UI's current details, after the record changed. */
  private void publish() {
    RunEvent best = best();
    if (best != null) {
      Workflow.upsertTypedSearchAttributes(
          WhaleSearchAttributes.BEST_MEAN_AT_8.valueSet(best.meanAt8()),
          WhaleSearchAttributes.ROLLOUTS.valueSet(rollouts));
      Workflow.setCurrentDetails(RunTable.markdown(spec, evaluations, harness.name()));
    }
  }

  private void enterPhase(String p) {
    phase = p;
    Workflow.upsertTypedSearchAttributes(
        WhaleSearchAttributes.PHASE.valueSet(p),
        WhaleSearchAttributes.ROUND.valueSet((long) round),
        WhaleSearchAttributes.ROLLOUTS.valueSet(rollouts));
  }

  private WhaleState snapshot() {
    List<RunEvent> kept = events.size() <= WhaleState.KEPT_EVENTS ? events
        : events.subList(events.size() - WhaleState.KEPT_EVENTS, events.size());
    return new WhaleState(limits, round, steps, lastPhase, rollouts, testRollouts, checkpointRef,
        harness, sampler, baseMeanAt8, List.copyOf(kept), List.copyOf(evaluations), paused,
        stopRequested, continuedAsNew + 1, retention);
  }

  private void restore(WhaleState s) {
    limits = s.limits();
    round = s.round();
    steps = s.steps();
    lastPhase = s.lastPhase();
    rollouts = s.rollouts();
    testRollouts = s.testRollouts();
    checkpointRef = s.checkpointRef();
    harness = s.harness();
    sampler = s.sampler();
    baseMeanAt8 = s.baseMeanAt8();
    events = new ArrayList<>(s.events());
    evaluations = new ArrayList<>(s.evaluations());
    paused = s.paused();
    stopRequested = s.stopRequested();
    continuedAsNew = s.continuedAsNew();
    retention = retaining ? s.retention() : null;
    if (retention == null && retaining && !evaluations.isEmpty()) {
      // continued as new from a run before retention: hold what its record still names, release
      // nothing it made before (those checkpoints are not known here)
      retention = Retention.start(Workflow.getInfo().getWorkflowId(), spec.checkpoints().keepLast(),
          evaluations.get(0).checkpointRef()).phaseEnd(checkpointRef);
      for (RunEvent e : evaluations) {
        retention = retention.evaluated(e.checkpointRef(), e.meanAt8());
      }
    }
    phase = lastPhase == null ? "base" : lastPhase == PhasePlanner.Kind.WEIGHT ? "weight" : "harness";
  }

  // --- controls -------------------------------------------------------------------------------

  /** Between phases (or before the first) the switch applies to the next phase, after its first unit. */
  @Override
  public void forcePhaseSwitch() {
    if (!switchRequested && !ended) {
      switchRequested = true;
      if (phaseWorkflowId != null) {
        controls.add(new Control("forcePhaseSwitch", null));
      }
    }
  }

  @Override
  public void pause() {
    paused = true;
    controls.add(new Control("pause", null));
  }

  @Override
  public void resume() {
    paused = false;
    controls.add(new Control("resume", null));
  }

  @Override
  public void stop() {
    stopRequested = true;
    controls.add(new Control("stop", null));
  }

  @Override
  public void phaseProgress(JsonNode payload) {
    PhaseProgress p;
    try {
      p = Payloads.read(payload, PhaseProgress.class);
      Payloads.check(p.problems());
    } catch (Payloads.InvalidPayloadException e) {
      reject("phaseProgress", e.getMessage());
      return;
    }
    if (!p.phaseWorkflowId().equals(phaseWorkflowId) || p.seq() <= progressSeq) {
      return; // not from the running phase, or a repeat: the phase's result will say all
    }
    progressSeq = p.seq();
    events.add(p.event());
    if ("test-eval".equals(p.event().kind())) {
      evaluations.add(p.event());
    }
    if (p.steps() > 0) {
      steps = p.steps();
      checkpointRef = p.checkpointRef();
    }
    harnessIteration = p.harnessIteration();
    rollouts = p.rollouts();
    testRollouts = Math.max(testRollouts, p.testRollouts());
    publish();
  }

  /** Logs and records a signal payload that was ignored; the run goes on as if it never came. */
  private void reject(String signal, String why) {
    String line = "signal " + signal + " ignored: " + why;
    Workflow.getLogger(WhaleWorkflowImpl.class).warn(line);
    if (rejected.size() == KEPT_REJECTIONS) {
      rejected.removeFirst();
    }
    rejected.addLast(line);
  }

  @Override
  public void validateSwitchPhase() {
    if (ended) {
      throw new IllegalStateException("the run has ended; there is no phase to switch");
    }
    if (stopRequested) {
      throw new IllegalStateException("the run is stopping; there is no phase to switch to");
    }
    if (paused) {
      throw new IllegalStateException("the run is paused: resume it before switching phases");
    }
    if (phaseWorkflowId == null) {
      throw new IllegalStateException("no phase is running (the run is in phase " + phase + ")");
    }
    if (switchRequested) {
      throw new IllegalStateException("a switch of this " + phase + " phase is already pending");
    }
  }

  @Override
  public String switchPhase() {
    forcePhaseSwitch();
    return String.format(Locale.ROOT, "the %s phase of round %d ends after its current %s", phase,
        round, phase.equals("weight") ? "RSFT step" : "iteration");
  }

  @Override
  public void validateAdjust(JsonNode payload) {
    Adjustment a = Payloads.read(payload, Adjustment.class); // names a malformed field
    if (ended) {
      throw new IllegalStateException("the run has ended; its limits can no longer change");
    }
    if (stopRequested) {
      throw new IllegalStateException("the run is stopping; its limits can no longer change");
    }
    if (limits == null) {
      throw new IllegalStateException("the run has not started its schedule yet");
    }
    List<String> problems = limits.problems(a, spec.scheduleKind(), steps);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
  }

  @Override
  public String adjust(JsonNode payload) {
    limits = limits.adjusted(Payloads.read(payload, Adjustment.class)); // the validator accepted it
    if (phaseWorkflowId != null) {
      controls.add(new Control("limits", limits));
    }
    return String.format(Locale.ROOT,
        "weight budget %d steps (%.2f epochs, %d done); patience %d steps; harness phases: at least "
            + "%d iterations, stop after %d without a better best, at most %d",
        limits.budgetSteps(), limits.budgetSteps() / (double) limits.stepsPerEpoch(), steps,
        limits.patienceSteps(), limits.harness().minIterations(), limits.harness().patience(),
        limits.harness().maxIterations());
  }

  @Override
  public WhaleStatus status() {
    RunEvent best = best();
    return new WhaleStatus(phase, paused, stopRequested, round, steps,
        limits == null ? 0 : limits.budgetSteps(), harnessIteration, rollouts, testRollouts,
        best == null ? Double.NaN : best.meanAt8(), label(best), best == null ? 0 : best.rollouts(),
        checkpointRef, harness == null ? null : harness.sourceRef(),
        harness == null ? null : harness.name(), phaseWorkflowId, continuedAsNew,
        List.copyOf(rejected));
  }

  @Override
  public List<RunEvent> history() {
    return List.copyOf(events);
  }
}
