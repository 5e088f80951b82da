package whale.activities;

import java.util.List;
import java.util.Locale;
import whale.eval.MeanAtK;
import whale.harness.EpisodeResult;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.MeanAtKResult;

/** Rollouts for measurement: test mean@k, and harness candidates' scores on D_harness. */
public class EvalActivitiesImpl implements EvalActivities {
  private final ActivityRuntime runtime;

  public EvalActivitiesImpl(ActivityRuntime runtime) {
    this.runtime = runtime;
  }

  @Override
  public MeanAtKResult evaluate(EvalRequest req) {
    return ActivityHeartbeat.during(req.label(), () ->
        Memo.once(runtime.store(), Memo.Kind.EVALUATE, memoKey(req), MeanAtKResult.class, () -> run(req)));
  }

  /**
   * The request without its label, which only names progress lines: schedules label the same
   * evaluation differently ("round 1 weight end", "round 1 step 4"), and a comparison's cells must
   * find each other's identical evaluations (issue 24).
   */
  static EvalRequest memoKey(EvalRequest req) {
    return new EvalRequest(req.task(), req.checkpointRef(), req.harnessRef(), req.split(), req.k(),
        req.seed(), req.episodes(), null);
  }

  private MeanAtKResult run(EvalRequest req) {
    if (req.split() == null) {
      throw new IllegalArgumentException("evaluate: split must be 'test' or 'harness', got 'null'");
    }
    // D_weight is for training only: no evaluation split names it, never report or select on it
    Split split = switch (req.split()) {
      case TEST -> Split.TEST;
      case HARNESS -> Split.HARNESS;
    };
    if (req.k() < 1) {
      throw new IllegalArgumentException("evaluate: k must be at least 1, got " + req.k());
    }
    Task task = runtime.task(req.task());
    List<TaskProblem> problems = task.split(split);
    String harness = runtime.harnessSource(req.harnessRef());
    List<EpisodeResult> episodes = runtime.withSampler(req.checkpointRef(), req.episodes(), model ->
        Episodes.run(runtime.episodes(), model, task, harness, problems, req.k(), req.seed(), req.episodes(),
            req.label()));
    MeanAtK m = MeanAtK.ofEpisodes(episodes);
    double turns = episodes.stream().mapToInt(EpisodeResult::turns).average().orElse(0);
    String traces = runtime.store().putJson(episodes);
    WhaleMetrics.rollouts(req.split().json(), episodes.size());
    WhaleMetrics.meanAtK(req.split().json(), m.meanAtK());
    ActivityHeartbeat.progress(String.format(Locale.ROOT, "%s: mean@%d %.3f", req.label(), req.k(),
        m.meanAtK()));
    return new MeanAtKResult(m.meanAtK(), m.passAtK(), m.majAtK(), turns, req.k(), m.problems(),
        episodes.size(), traces);
  }
}
