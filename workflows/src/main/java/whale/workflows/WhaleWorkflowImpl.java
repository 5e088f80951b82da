package whale.workflows;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import whale.workflows.activities.ArchiveEntry;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.MeanAtKResult;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.activities.WeightActivities;
import whale.workflows.schedule.FixedSchedule;
import whale.workflows.schedule.ParetoAcceptance;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Seeds;

/**
 * The fixed WHALE schedule. Deterministic: all randomness is seeds derived from the spec, all work is
 * activities, and only references (checkpoints, harness sources, traces) pass through history.
 */
public class WhaleWorkflowImpl implements WhaleWorkflow {
  // Seed streams: one constant per use so that seeds never collide across uses.
  private static final long SAMPLER = 1, PRETRAIN = 2, STEP = 3, HARNESS_SCORE = 4, TEST = 5,
      PROPOSE = 6;

  /**
   * Heartbeat timeout: a dead worker is noticed within 20 s and its activity retried elsewhere.
   * Activities heartbeat per pretraining step, per model batch and before each SFT epoch (the SDK
   * throttles to 0.8 x this), all far more often than 20 s at whale's sizes.
   */
  private static final Duration HEARTBEAT = Duration.ofSeconds(20);

  private static final RetryOptions RETRY = RetryOptions.newBuilder()
      .setInitialInterval(Duration.ofSeconds(1))
      .setBackoffCoefficient(2.0)
      .setMaximumInterval(Duration.ofSeconds(30))
      .setMaximumAttempts(10)
      .setDoNotRetry(IllegalArgumentException.class.getName())
      .build();

  private ExperimentSpec spec;
  private TaskRef task;
  private EpisodeSettings episodes;
  private FixedSchedule schedule;
  private PersistentSampler sampler;

  private String phase = "starting";
  private boolean paused;
  private boolean stopRequested;
  private boolean switchRequested;
  private int round;
  private int steps;
  private int harnessIteration;
  private long rollouts;
  private long testRollouts;
  private String checkpointRef;
  private CandidateInfo harness;
  private double baseMeanAt8 = Double.NaN;
  private double bestMeanAt8 = Double.NaN;
  private String bestAt = "";
  private long rolloutsAtBest;
  private final List<RunEvent> events = new ArrayList<>();
  private final List<RunEvent> evaluations = new ArrayList<>();

  @Override
  public WhaleResult run(ExperimentSpec input) {
    List<String> problems = SpecValidator.problems(input);
    if (!problems.isEmpty()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "invalid experiment spec: " + String.join("; ", problems), "InvalidSpec");
    }
    spec = input;
    task = TaskRef.of(spec);
    episodes = EpisodeSettings.of(spec);
    schedule = FixedSchedule.of(spec.data().weightProblems(), spec.rsft().promptsPerStep(),
        spec.phases().weightEpochsPerPhase(), spec.phases().weightBudgetEpochs(),
        spec.phases().harnessIterationsPerPhase(), spec.phases().maxRounds());
    sampler = new PersistentSampler(spec.data().weightProblems(), Seeds.mix(spec.seed(), SAMPLER),
        PersistentSampler.Position.START);

    enterPhase("base");
    checkpointRef = weight("pretrain the base model")
        .prepareBaseModel(new BaseModelRequest(task, spec.model(), Seeds.mix(spec.seed(), PRETRAIN)));
    harness = harnessActivities("write the initial harness h0").initialHarness(task);
    if (!harness.valid()) {
      throw ApplicationFailure.newNonRetryableFailure(
          "the task's initial harness is invalid: " + harness.error(), "InvalidHarness");
    }
    evaluateTest();
    baseMeanAt8 = bestMeanAt8;

    while (!stopRequested && schedule.startsRound(round + 1, steps)) {
      round++;
      weightPhase();
      evaluateTest();
      if (stopRequested || !schedule.harnessPhaseAfter(steps)) {
        break;
      }
      harnessPhase();
      evaluateTest();
    }
    enterPhase("done");
    return new WhaleResult(spec.name(), spec.schedule(), baseMeanAt8, bestMeanAt8, bestAt,
        rolloutsAtBest, rollouts, testRollouts, round, steps, stopRequested, checkpointRef,
        harness.sourceRef(), harness.name(), List.copyOf(evaluations));
  }

  private void weightPhase() {
    enterPhase("weight");
    int n = schedule.weightSteps(steps);
    for (int i = 0; i < n; i++) {
      awaitUnpaused();
      if (stopRequested) {
        return;
      }
      List<Integer> batch = sampler.next(spec.rsft().promptsPerStep());
      int step = steps + 1;
      RsftStepResult r = weight(String.format(Locale.ROOT, "RSFT step %d/%d (round %d)", step,
          schedule.budgetSteps(), round))
          .rsftStep(new RsftStepRequest(task, checkpointRef, harness.sourceRef(), step, batch,
              spec.rsft().samplesPerPrompt(), spec.rsft().acceptThreshold(),
              spec.rsft().minibatch(), spec.rsft().learningRate(),
              Seeds.mix(spec.seed(), STEP, step), episodes));
      steps = step;
      checkpointRef = r.checkpointRef();
      rollouts += r.rollouts();
      events.add(RunEvent.step(round, steps, rollouts, r.trainReward(), r.accepted(), r.loss(),
          checkpointRef));
      Workflow.upsertTypedSearchAttributes(WhaleSearchAttributes.ROLLOUTS.valueSet(rollouts));
      if (stopRequested) {
        return;
      }
      if (switchRequested) {
        switchRequested = false;
        return;
      }
    }
  }

  private void harnessPhase() {
    enterPhase("harness");
    String phaseKey = Workflow.getInfo().getWorkflowId() + "/round-" + round;
    long scoreSeed = Seeds.mix(spec.seed(), HARNESS_SCORE, round);
    List<ArchiveEntry> archive = new ArrayList<>();

    // Iteration 1: the incoming harness re-scored under the new weights.
    harnessIteration = 1;
    MeanAtKResult incoming = score(harness, scoreSeed, 1);
    rollouts += incoming.rollouts();
    archive.add(new ArchiveEntry(1, harness, incoming));
    events.add(RunEvent.candidate(round, 1, rollouts, harness.name(), incoming.meanAtK(),
        incoming.meanTurns(), harness.sourceRef(), null));

    for (int it = 2; it <= schedule.iterationsPerHarnessPhase(); it++) {
      awaitUnpaused();
      if (stopRequested) {
        break;
      }
      if (switchRequested) {
        switchRequested = false;
        break;
      }
      harnessIteration = it;
      List<CandidateInfo> candidates = harnessActivities(String.format(Locale.ROOT,
          "propose %d candidates (round %d, iteration %d)",
          spec.harness().candidatesPerIteration(), round, it))
          .propose(new ProposeRequest(task, spec.harness().proposer(), phaseKey, it,
              spec.harness().candidatesPerIteration(), Seeds.mix(spec.seed(), PROPOSE, round, it),
              List.copyOf(archive), spec.harness()));
      // Candidates are scored in parallel: eval workers can take them side by side.
      List<Promise<MeanAtKResult>> scores = new ArrayList<>();
      for (CandidateInfo c : candidates) {
        final int iteration = it;
        scores.add(c.valid() ? Async.function(() -> score(c, scoreSeed, iteration)) : null);
      }
      for (int i = 0; i < candidates.size(); i++) {
        CandidateInfo c = candidates.get(i);
        MeanAtKResult s = scores.get(i) == null ? null : scores.get(i).get();
        if (s != null) {
          rollouts += s.rollouts();
        }
        archive.add(new ArchiveEntry(it, c, s));
        events.add(RunEvent.candidate(round, it, rollouts, c.name(),
            s == null ? null : s.meanAtK(), s == null ? null : s.meanTurns(), c.sourceRef(),
            c.valid() ? null : c.error()));
      }
      Workflow.upsertTypedSearchAttributes(WhaleSearchAttributes.ROLLOUTS.valueSet(rollouts));
    }

    List<ParetoAcceptance.Scored> scored = new ArrayList<>();
    for (int i = 0; i < archive.size(); i++) {
      ArchiveEntry e = archive.get(i);
      if (e.score() != null) {
        scored.add(new ParetoAcceptance.Scored(Integer.toString(i), e.score().meanAtK(),
            e.score().meanTurns(), i));
      }
    }
    ParetoAcceptance.Scored winner = ParetoAcceptance.pick(scored);
    ArchiveEntry w = archive.get(winner.order());
    harness = w.candidate();
    events.add(RunEvent.accept(round, w.iteration(), rollouts, harness.name(), winner.success(),
        winner.meanTurns(), harness.sourceRef()));
    harnessIteration = 0;
  }

  private MeanAtKResult score(CandidateInfo c, long seed, int iteration) {
    return eval(String.format(Locale.ROOT, "score %s (round %d, iteration %d)", c.name(), round,
        iteration))
        .evaluate(new EvalRequest(task, checkpointRef, c.sourceRef(), "harness", 1, seed, episodes,
            "round " + round + " iteration " + iteration + " " + c.name()));
  }

  private void evaluateTest() {
    String label = round == 0 ? "base" : "round " + round + " " + phase;
    MeanAtKResult r = eval("test mean@" + spec.eval().k() + " after " + label)
        .evaluate(new EvalRequest(task, checkpointRef, harness.sourceRef(), "test",
            spec.eval().k(), Seeds.mix(spec.seed(), TEST), episodes, label));
    testRollouts += r.rollouts();
    RunEvent e = RunEvent.testEval(phase, round, steps, rollouts, r.meanAtK(), r.passAtK(),
        r.majAtK(), r.meanTurns(), checkpointRef, harness.sourceRef());
    events.add(e);
    evaluations.add(e);
    if (Double.isNaN(bestMeanAt8) || r.meanAtK() > bestMeanAt8) {
      bestMeanAt8 = r.meanAtK();
      bestAt = label;
      rolloutsAtBest = rollouts;
      Workflow.upsertTypedSearchAttributes(WhaleSearchAttributes.BEST_MEAN_AT_8.valueSet(bestMeanAt8));
    }
    Workflow.setCurrentDetails(RunTable.markdown(spec, evaluations, harness.name()));
  }

  private void enterPhase(String p) {
    phase = p;
    Workflow.upsertTypedSearchAttributes(
        WhaleSearchAttributes.PHASE.valueSet(p),
        WhaleSearchAttributes.ROUND.valueSet((long) round),
        WhaleSearchAttributes.ROLLOUTS.valueSet(rollouts));
  }

  private void awaitUnpaused() {
    Workflow.await(() -> !paused || stopRequested);
  }

  private WeightActivities weight(String summary) {
    return Workflow.newActivityStub(WeightActivities.class, ActivityOptions.newBuilder()
        .setTaskQueue(WeightActivities.TASK_QUEUE)
        .setStartToCloseTimeout(Duration.ofHours(2))
        .setHeartbeatTimeout(HEARTBEAT)
        .setRetryOptions(RETRY)
        .setSummary(summary)
        .build());
  }

  private EvalActivities eval(String summary) {
    return Workflow.newActivityStub(EvalActivities.class, ActivityOptions.newBuilder()
        .setTaskQueue(EvalActivities.TASK_QUEUE)
        .setStartToCloseTimeout(Duration.ofHours(2))
        .setHeartbeatTimeout(HEARTBEAT)
        .setRetryOptions(RETRY)
        .setSummary(summary)
        .build());
  }

  private HarnessActivities harnessActivities(String summary) {
    return Workflow.newActivityStub(HarnessActivities.class, ActivityOptions.newBuilder()
        .setTaskQueue(HarnessActivities.TASK_QUEUE)
        .setStartToCloseTimeout(Duration.ofMinutes(30))
        .setHeartbeatTimeout(HEARTBEAT)
        .setRetryOptions(RETRY)
        .setSummary(summary)
        .build());
  }

  @Override
  public void forcePhaseSwitch() {
    switchRequested = true;
  }

  @Override
  public void pause() {
    paused = true;
  }

  @Override
  public void resume() {
    paused = false;
  }

  @Override
  public void stop() {
    stopRequested = true;
  }

  @Override
  public WhaleStatus status() {
    return new WhaleStatus(phase, paused, stopRequested, round, steps,
        schedule == null ? 0 : schedule.budgetSteps(), harnessIteration, rollouts, testRollouts,
        bestMeanAt8, bestAt, rolloutsAtBest, checkpointRef,
        harness == null ? null : harness.sourceRef(), harness == null ? null : harness.name());
  }

  @Override
  public List<RunEvent> history() {
    return List.copyOf(events);
  }
}
