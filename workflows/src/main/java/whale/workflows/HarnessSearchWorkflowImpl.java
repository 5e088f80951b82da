package whale.workflows;

import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import whale.workflows.activities.ArchiveEntry;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.MeanAtKResult;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.ParetoAcceptance;
import whale.workflows.schedule.Seeds;

/** See {@link HarnessSearchWorkflow}. Deterministic; sources and traces travel by reference only. */
public class HarnessSearchWorkflowImpl extends PhaseControls implements HarnessSearchWorkflow {
  @Override
  public HarnessSearchResult run(HarnessSearchInput in) {
    ExperimentSpec spec = in.spec();
    HarnessSearchInput.Plan plan = in.plan();
    start(in.limits(), in.controls());
    TaskRef task = TaskRef.of(spec);
    EpisodeSettings episodes = EpisodeSettings.of(spec);
    String phaseId = Workflow.getInfo().getWorkflowId();
    // The archive directory (named by the phase id) and the scoring seed are the phase's, whichever
    // run of it is current.
    long scoreSeed = Seeds.mix(spec.seed(), SeedStreams.HARNESS_SCORE, plan.round());
    List<ArchiveEntry> archive = new ArrayList<>(in.search().archive());
    List<RunEvent> events = new ArrayList<>(in.events());
    long rollouts = in.rollouts();
    int iteration = in.search().iteration();
    double best = in.search().best();
    int bestIteration = in.search().bestIteration();
    int seq = in.progressSeq();
    String endedBy;

    if (iteration == 0) {
      // Iteration 1: the incoming harness re-scored under the new weights.
      iteration = 1;
      MeanAtKResult s = score(spec, task, episodes, in.checkpointRef(), in.incoming(), scoreSeed,
          plan.round(), 1);
      rollouts += s.rollouts();
      archive.add(new ArchiveEntry(1, in.incoming(), s));
      RunEvent e = RunEvent.candidate(plan.round(), 1, rollouts, in.incoming().name(), s.meanAtK(),
          s.meanTurns(), in.incoming().sourceRef(), null);
      events.add(e);
      best = s.meanAtK();
      bestIteration = 1;
      PhaseReporter.report(new PhaseProgress(phaseId, ++seq, e, 0, 1, rollouts, 0, null));
    }

    for (int thisRun = 0; ; thisRun++) {
      if (!more(plan, iteration, bestIteration)) {
        endedBy = endedByRule(plan, iteration);
        break;
      }
      // Checked after an iteration: a switched search has still re-scored the incoming harness.
      if (switchRequested) {
        endedBy = "switch";
        break;
      }
      Workflow.await(() -> !paused || stopRequested || switchRequested);
      if (stopRequested) {
        endedBy = "stop";
        break;
      }
      if (switchRequested) {
        endedBy = "switch";
        break;
      }
      // A rule adjusted while the search was held here applies now, not after one more iteration.
      // Versioned (asked only when it matters): a history recorded before the fix ran that iteration.
      if (!more(plan, iteration, bestIteration)
          && Workflow.getVersion("limits-after-pause", Workflow.DEFAULT_VERSION, 1) >= 1) {
        endedBy = endedByRule(plan, iteration);
        break;
      }
      if (PhaseReporter.continueAsNewDue(spec, thisRun)) {
        Workflow.await(Workflow::isEveryHandlerFinished);
        Workflow.continueAsNew(new HarnessSearchInput(spec, plan, limits, in.checkpointRef(),
            in.incoming(), rollouts, new HarnessSearchInput.Search(archive, iteration, best,
                bestIteration), events, controls(), seq));
      }

      int it = ++iteration;
      List<CandidateInfo> candidates = WorkflowStubs.harness(String.format(Locale.ROOT,
          "propose %d candidates (round %d, iteration %d)%s",
          spec.harness().candidatesPerIteration(), plan.round(), it,
          plan.promptOnly() ? ", prompt only" : ""))
          .propose(new ProposeRequest(task, spec.harness().proposerKind(), phaseId, it,
              spec.harness().candidatesPerIteration(),
              Seeds.mix(spec.seed(), SeedStreams.PROPOSE, plan.round(), it), List.copyOf(archive),
              spec.harness(), plan.promptOnly(), in.incoming().sourceRef()));
      // Candidates are scored in parallel: eval workers can take them side by side.
      List<Promise<MeanAtKResult>> scores = new ArrayList<>();
      for (CandidateInfo c : candidates) {
        scores.add(c.valid()
            ? Async.function(() -> score(spec, task, episodes, in.checkpointRef(), c, scoreSeed,
                plan.round(), it))
            : null);
      }
      for (int i = 0; i < candidates.size(); i++) {
        CandidateInfo c = candidates.get(i);
        MeanAtKResult s = scores.get(i) == null ? null : scores.get(i).get();
        if (s != null) {
          rollouts += s.rollouts();
          if (s.meanAtK() > best) {
            best = s.meanAtK();
            bestIteration = it;
          }
        }
        archive.add(new ArchiveEntry(it, c, s));
        RunEvent e = RunEvent.candidate(plan.round(), it, rollouts, c.name(),
            s == null ? null : s.meanAtK(), s == null ? null : s.meanTurns(), c.sourceRef(),
            c.valid() ? null : c.error());
        events.add(e);
        PhaseReporter.report(new PhaseProgress(phaseId, ++seq, e, 0, it, rollouts, 0, null));
      }
    }

    List<ParetoAcceptance.Scored> scored = new ArrayList<>();
    for (int i = 0; i < archive.size(); i++) {
      ArchiveEntry e = archive.get(i);
      if (e.score() != null) {
        scored.add(new ParetoAcceptance.Scored(e.candidate().name(), e.score().meanAtK(),
            e.score().meanTurns(), i));
      }
    }
    ParetoAcceptance.Scored winner = ParetoAcceptance.pick(scored);
    ArchiveEntry w = archive.get(winner.order());
    events.add(RunEvent.accept(plan.round(), w.iteration(), rollouts, w.candidate().name(),
        winner.success(), winner.meanTurns(), w.candidate().sourceRef()));
    return new HarnessSearchResult(w.candidate(), w.iteration(), winner.success(),
        winner.meanTurns(), iteration, rollouts, List.copyOf(events), endedBy);
  }

  /** Whether another iteration follows, under the current limits. */
  private boolean more(HarnessSearchInput.Plan plan, int iteration, int bestIteration) {
    return plan.adaptive()
        ? limits.harness().continues(iteration, bestIteration)
        : iteration < plan.iterations();
  }

  /** Why the search ended when {@link #more} said no. */
  private String endedByRule(HarnessSearchInput.Plan plan, int iteration) {
    return plan.adaptive() && iteration < limits.harness().maxIterations() ? "patience" : "length";
  }

  private static MeanAtKResult score(ExperimentSpec spec, TaskRef task, EpisodeSettings episodes,
      String checkpointRef, CandidateInfo c, long seed, int round, int iteration) {
    return WorkflowStubs.eval(String.format(Locale.ROOT, "score %s (round %d, iteration %d)",
        c.name(), round, iteration))
        .evaluate(new EvalRequest(task, checkpointRef, c.sourceRef(), EvalRequest.Split.HARNESS, 1,
            seed, episodes, "round " + round + " iteration " + iteration + " " + c.name()));
  }
}
