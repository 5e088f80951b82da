package whale.workflows;

import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.PatienceRule;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Retention;
import whale.workflows.schedule.Seeds;

/** See {@link WeightPhaseWorkflow}. Deterministic; all work is activities, only references in history. */
public class WeightPhaseWorkflowImpl extends PhaseControls implements WeightPhaseWorkflow {
  @Override
  public WeightPhaseResult run(WeightPhaseInput in) {
    ExperimentSpec spec = in.spec();
    WeightPhaseInput.Plan plan = in.plan();
    start(in.limits(), in.controls());
    TaskRef task = TaskRef.of(spec);
    EpisodeSettings episodes = EpisodeSettings.of(spec);
    PersistentSampler sampler = new PersistentSampler(spec.data().weightProblems(),
        Seeds.mix(spec.seed(), SeedStreams.SAMPLER), in.model().sampler());
    CandidateInfo harness = in.model().harness();
    String checkpoint = in.model().checkpointRef();
    int steps = in.spent().steps();
    long rollouts = in.spent().rollouts();
    long testRollouts = in.spent().testRollouts();
    PatienceRule.State patience = in.patience();
    List<RunEvent> events = new ArrayList<>(in.record().events());
    List<RunEvent> evaluations = new ArrayList<>(in.record().evaluations());
    int seq = in.progressSeq();
    Retention retention = in.retention();
    int evalEvery = evalEverySteps(spec, limits.stepsPerEpoch());
    String phaseId = Workflow.getInfo().getWorkflowId();
    String endedBy;

    for (int stepsThisRun = 0; ; stepsThisRun++) {
      String limitReached = limitReached(plan, steps);
      if (limitReached != null) {
        endedBy = limitReached;
        break;
      }
      Workflow.await(() -> !paused || stopRequested);
      if (stopRequested) {
        endedBy = "stop";
        break;
      }
      // Limits adjusted while the phase was held here apply now, not after one more step. Versioned
      // (asked only when it matters): a history recorded before the fix made that step.
      limitReached = limitReached(plan, steps);
      if (limitReached != null
          && Workflow.getVersion("limits-after-pause", Workflow.DEFAULT_VERSION, 1) >= 1) {
        endedBy = limitReached;
        break;
      }
      if (PhaseReporter.continueAsNewDue(spec, stepsThisRun)) {
        Workflow.await(Workflow::isEveryHandlerFinished);
        Workflow.continueAsNew(new WeightPhaseInput(spec, plan, limits,
            new Model(checkpoint, harness, sampler.position()),
            new Counters(steps, rollouts, testRollouts), patience,
            new RunRecord(events, evaluations), controls(), seq, retention));
      }

      List<Integer> batch = sampler.next(spec.rsft().promptsPerStep());
      int step = steps + 1;
      RsftStepResult r = WorkflowStubs.weight(String.format(Locale.ROOT,
          "RSFT step %d/%d (round %d)", step, limits.budgetSteps(), plan.round()))
          .rsftStep(new RsftStepRequest(task, checkpoint, harness.sourceRef(), step, batch,
              spec.rsft().samplesPerPrompt(), spec.rsft().acceptThreshold(), spec.rsft().minibatch(),
              spec.rsft().learningRate(), Seeds.mix(spec.seed(), SeedStreams.STEP, step), episodes));
      steps = step;
      checkpoint = r.checkpointRef();
      rollouts += r.rollouts();
      RunEvent e = RunEvent.step(plan.round(), steps, rollouts, r.trainReward(), r.accepted(), r.loss(),
          checkpoint);
      events.add(e);
      PhaseReporter.report(new PhaseProgress(phaseId, ++seq, e, steps, 0, rollouts, testRollouts,
          checkpoint));
      patience = limits.patienceRule().observe(patience, r.trainReward());
      if (retention != null) {
        retention = retention.step(checkpoint);
      }

      if (evalEvery > 0 && steps % evalEvery == 0) {
        SeedStreams.Evaluated t = SeedStreams.testEval(spec, "weight", plan.round(), steps, rollouts,
            checkpoint, harness.sourceRef(),
            String.format(Locale.ROOT, "step %d (%.2f epochs)", steps, steps / (double) limits.stepsPerEpoch()));
        testRollouts += t.rollouts();
        evaluations.add(t.event());
        events.add(t.event());
        PhaseReporter.report(new PhaseProgress(phaseId, ++seq, t.event(), steps, 0, rollouts,
            testRollouts, checkpoint));
        if (retention != null) {
          retention = retention.evaluated(checkpoint, t.event().meanAt8());
        }
      }
      // after the step's evaluation, so a step that became the best is never released first
      retention = WorkflowStubs.retain(retention);
      if (plan.adaptive() && limits.patienceRule().fires(patience)) {
        endedBy = "patience";
        break;
      }
      if (switchRequested) { // checked after the step: a switched phase still makes one step
        endedBy = "switch";
        break;
      }
    }
    return new WeightPhaseResult(checkpoint, steps, sampler.position(), rollouts, testRollouts,
        List.copyOf(events), List.copyOf(evaluations), endedBy, retention);
  }

  /** "budget" or "length" once {@code steps} reach the phase's limit under the current limits, else null. */
  private String limitReached(WeightPhaseInput.Plan plan, int steps) {
    int limit = plan.adaptive() ? limits.budgetSteps() : Math.min(plan.stepLimit(), limits.budgetSteps());
    return steps < limit ? null : steps >= limits.budgetSteps() ? "budget" : "length";
  }

  /** Periodic test evaluation in steps: {@code eval.everyEpochs} of an epoch, at least one step. */
  static int evalEverySteps(ExperimentSpec spec, int stepsPerEpoch) {
    double every = spec.eval().everyEpochs();
    return every <= 0 ? 0 : Math.max(1, (int) Math.round(every * stepsPerEpoch));
  }
}
