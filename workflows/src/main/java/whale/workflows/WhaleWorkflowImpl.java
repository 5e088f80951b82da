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
  private record Forward(String signal, Limits limits) {}

  // The run's state: what continue-as-new carries over (see WhaleState), as the same records.
  private Limits limits;
  private int round;
  private PhasePlanner.Kind lastPhase;
  private Counters spent = Counters.ZERO;
  private Model model = new Model(null, null, PersistentSampler.Position.START);
  private List<RunEvent> events = new ArrayList<>();
  private List<RunEvent> evaluations = new ArrayList<>();
  private Controls controls = Controls.NONE;
  private int continuedAsNew;
  /** Null in a run recorded before checkpoint retention: it keeps every checkpoint, as it did. */
  private Retention retention;

  // This run's own: derived from the spec, the state or the phase now running.
  private ExperimentSpec spec;
  private boolean retaining;
  private String phase = "starting";
  private boolean ended;
  private int harnessIteration;
  private String phaseWorkflowId;
  /** The child has started: only then does status name it (a signal sent earlier finds nothing). */
  private boolean phaseStarted;
  private int progressSeq;
  private final Deque<Forward> toForward = new ArrayDeque<>();
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
      Workflow.await(() -> !controls.paused() || controls.stopRequested());
      if (controls.stopRequested()) {
        break;
      }
      PhasePlanner.Phase next = limits.planner(spec.scheduleKind())
          .next(new PhasePlanner.Progress(round, spent.steps(), lastPhase));
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
      // a switch signalled between phases applied to the phase just run
      controls = controls.withSwitch(false);
      lastPhase = next.kind();
      evaluateTest("round " + round + " " + phase + " end");
      retention = WorkflowStubs.retain(retention);
    }
    ended = true;
    enterPhase("done");
    RunEvent best = best();
    return new WhaleResult(spec.name(), spec.schedule(), evaluations.get(0).meanAt8(),
        best.meanAt8(), label(best), best.rollouts(), spent.rollouts(), spent.testRollouts(), round,
        spent.steps(), controls.stopRequested(), model.checkpointRef(), model.harness().sourceRef(),
        model.harness().name(), List.copyOf(evaluations),
        retention == null ? List.of() : retention.deferred());
  }

  /** Pretrain the base model, write h0, evaluate both: the reference every schedule starts from. */
  private void startBase() {
    enterPhase("base");
    model = model.withCheckpoint(WorkflowStubs.weight("pretrain the base model")
        .prepareBaseModel(BaseModelRequest.of(spec, TaskRef.of(spec),
            Seeds.mix(spec.seed(), SeedStreams.PRETRAIN))));
    if (retaining) {
      retention = Retention.start(Workflow.getInfo().getWorkflowId(), spec.checkpoints().keepLast(),
          model.checkpointRef());
    }
    model = model.withHarness(WorkflowStubs.harness("write the initial harness h0")
        .initialHarness(TaskRef.of(spec), spec.harness().initialForm()));
    if (!model.harness().valid()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "the task's initial harness is invalid: " + model.harness().error(), "InvalidHarness");
    }
    evaluateTest("base"); // the first evaluation: the run's base mean@k
  }

  private void weightPhase(PhasePlanner.Phase p) {
    enterPhase("weight");
    toForward.clear(); // the run never starts a phase while paused or stopping: nothing to pass on
    String id = Workflow.getInfo().getWorkflowId() + "/r" + round + "-weight";
    WeightPhaseWorkflow child = Workflow.newChildWorkflowStub(WeightPhaseWorkflow.class,
        childOptions(id, String.format(Locale.ROOT, "weight phase, round %d (%s)", round,
            p.adaptiveWeight() ? "until patience" : "to step " + p.stepLimit())));
    WeightPhaseInput in = WeightPhaseInput.start(spec,
        new WeightPhaseInput.Plan(round, p.stepLimit(), p.adaptiveWeight()), limits, model, spent,
        controls.switchRequested(), retention);
    int eventsAt = events.size();
    int evaluationsAt = evaluations.size();
    WeightPhaseResult r = follow(id, Async.function(child::run, in), child);
    // The result is the authority: it replaces the live progress reports.
    truncate(eventsAt, evaluationsAt);
    events.addAll(r.events());
    evaluations.addAll(r.evaluations());
    model = new Model(r.checkpointRef(), model.harness(), r.sampler());
    if (retention != null) {
      retention = r.retention().phaseEnd(model.checkpointRef());
    }
    spent = new Counters(r.steps(), r.rollouts(), r.testRollouts());
    publish();
  }

  private void harnessPhase(PhasePlanner.Phase p) {
    enterPhase("harness");
    toForward.clear();
    String id = Workflow.getInfo().getWorkflowId() + "/r" + round + "-harness";
    HarnessSearchWorkflow child = Workflow.newChildWorkflowStub(HarnessSearchWorkflow.class,
        childOptions(id, String.format(Locale.ROOT, "harness search, round %d (%s%s)", round,
            p.harnessRule() == null ? p.iterations() + " iterations" : "adaptive",
            p.promptOnly() ? ", prompt only" : "")));
    HarnessSearchInput in = HarnessSearchInput.start(spec,
        new HarnessSearchInput.Plan(round, p.iterations(), p.harnessRule() != null, p.promptOnly()),
        limits, model.checkpointRef(), model.harness(), spent.rollouts(),
        controls.switchRequested());
    int eventsAt = events.size();
    HarnessSearchResult r = follow(id, Async.function(child::run, in), child);
    truncate(eventsAt, evaluations.size());
    events.addAll(r.events());
    model = model.withHarness(r.winner());
    spent = spent.withRollouts(r.rollouts());
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
    phaseStarted = true;
    while (true) {
      Workflow.await(() -> result.isCompleted() || !toForward.isEmpty());
      while (!toForward.isEmpty() && !result.isCompleted()) {
        Forward c = toForward.poll();
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
        toForward.clear();
        phaseWorkflowId = null;
        phaseStarted = false;
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
          && last.checkpointRef().equals(model.checkpointRef())
          && last.harnessRef().equals(model.harness().sourceRef())) {
        return;
      }
    }
    SeedStreams.Evaluated t = SeedStreams.testEval(spec, round == 0 ? "base" : phase, round,
        spent.steps(), spent.rollouts(), model.checkpointRef(), model.harness().sourceRef(), label);
    spent = spent.plusTestRollouts(t.rollouts());
    events.add(t.event());
    evaluations.add(t.event());
    if (retention != null) {
      retention = retention.evaluated(model.checkpointRef(), t.event().meanAt8());
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
          WhaleSearchAttributes.ROLLOUTS.valueSet(spent.rollouts()));
      Workflow.setCurrentDetails(RunTable.markdown(spec, evaluations, model.harness().name()));
    }
  }

  private void enterPhase(String p) {
    phase = p;
    Workflow.upsertTypedSearchAttributes(
        WhaleSearchAttributes.PHASE.valueSet(p),
        WhaleSearchAttributes.ROUND.valueSet((long) round),
        WhaleSearchAttributes.ROLLOUTS.valueSet(spent.rollouts()));
  }

  private WhaleState snapshot() {
    // A switch signalled between phases is not carried into the next run (it never was).
    return new WhaleState(limits, round, lastPhase, spent, model,
        RunRecord.of(events, evaluations, WhaleState.KEPT_EVENTS), controls.withSwitch(false),
        continuedAsNew + 1, retention);
  }

  private void restore(WhaleState s) {
    limits = s.limits();
    round = s.round();
    lastPhase = s.lastPhase();
    spent = s.spent();
    model = s.model();
    events = new ArrayList<>(s.record().events());
    evaluations = new ArrayList<>(s.record().evaluations());
    // pause and stop as the state has them; a switch signalled to this run before here stands
    controls = s.controls().withSwitch(controls.switchRequested());
    continuedAsNew = s.continuedAsNew();
    retention = retaining ? s.retention() : null;
    if (retention == null && retaining && !evaluations.isEmpty()) {
      // continued as new from a run before retention: hold what its record still names, release
      // nothing it made before (those checkpoints are not known here)
      retention = Retention.start(Workflow.getInfo().getWorkflowId(), spec.checkpoints().keepLast(),
          evaluations.get(0).checkpointRef()).phaseEnd(model.checkpointRef());
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
    if (!controls.switchRequested() && !ended) {
      controls = controls.withSwitch(true);
      if (phaseWorkflowId != null) {
        toForward.add(new Forward("forcePhaseSwitch", null));
      }
    }
  }

  @Override
  public void pause() {
    controls = controls.withPaused(true);
    toForward.add(new Forward("pause", null));
  }

  @Override
  public void resume() {
    controls = controls.withPaused(false);
    toForward.add(new Forward("resume", null));
  }

  @Override
  public void stop() {
    controls = controls.withStop();
    toForward.add(new Forward("stop", null));
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
      model = model.withCheckpoint(p.checkpointRef());
    }
    harnessIteration = p.harnessIteration();
    spent = new Counters(p.steps() > 0 ? p.steps() : spent.steps(), p.rollouts(),
        Math.max(spent.testRollouts(), p.testRollouts()));
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
    if (controls.stopRequested()) {
      throw new IllegalStateException("the run is stopping; there is no phase to switch to");
    }
    if (controls.paused()) {
      throw new IllegalStateException("the run is paused: resume it before switching phases");
    }
    if (phaseWorkflowId == null) {
      throw new IllegalStateException("no phase is running (the run is in phase " + phase + ")");
    }
    if (controls.switchRequested()) {
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
    if (controls.stopRequested()) {
      throw new IllegalStateException("the run is stopping; its limits can no longer change");
    }
    if (limits == null) {
      throw new IllegalStateException("the run has not started its schedule yet");
    }
    List<String> problems = limits.problems(a, spec.scheduleKind(), spent.steps());
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
  }

  @Override
  public String adjust(JsonNode payload) {
    limits = limits.adjusted(Payloads.read(payload, Adjustment.class)); // the validator accepted it
    if (phaseWorkflowId != null) {
      toForward.add(new Forward("limits", limits));
    }
    return String.format(Locale.ROOT,
        "weight budget %d steps (%.2f epochs, %d done); patience %d steps; harness phases: at least "
            + "%d iterations, stop after %d without a better best, at most %d",
        limits.budgetSteps(), limits.budgetSteps() / (double) limits.stepsPerEpoch(), spent.steps(),
        limits.patienceSteps(), limits.harness().minIterations(), limits.harness().patience(),
        limits.harness().maxIterations());
  }

  @Override
  public WhaleStatus status() {
    RunEvent best = best();
    CandidateInfo harness = model.harness();
    return new WhaleStatus(phase, controls.paused(), controls.stopRequested(), round, spent.steps(),
        limits == null ? 0 : limits.budgetSteps(), harnessIteration, spent.rollouts(),
        spent.testRollouts(), best == null ? Double.NaN : best.meanAt8(), label(best),
        best == null ? 0 : best.rollouts(), model.checkpointRef(),
        harness == null ? null : harness.sourceRef(), harness == null ? null : harness.name(),
        phaseStarted ? phaseWorkflowId : null, continuedAsNew, List.copyOf(rejected));
  }

  @Override
  public List<RunEvent> history() {
    return List.copyOf(events);
  }
}
