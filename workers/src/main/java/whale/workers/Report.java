package whale.workers;

import java.util.Locale;
import whale.workflows.ExperimentSpec;
import whale.workflows.RunEvent;
import whale.workflows.RunTable;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleStatus;

/** Human-readable lines for the terminal. */
final class Report {
  private Report() {}

  static String event(RunEvent e, int budgetSteps) {
    return switch (e.kind()) {
      case "rsft-step" -> String.format(Locale.ROOT,
          "[weight  r%-2d] step %3d/%-3d reward %.3f  accepted %4d  loss %.3f  rollouts %d",
          e.round(), e.step(), budgetSteps, e.trainReward(), e.accepted(), e.loss(), e.rollouts());
      case "test-eval" -> String.format(Locale.ROOT,
          "[test    r%-2d] after %-7s mean@8 %.3f  pass@8 %.3f  maj@8 %.3f  turns %.1f  rollouts %d",
          e.round(), e.phase(), e.meanAt8(), e.passAt8(), e.majAt8(), e.meanTurns(), e.rollouts());
      case "candidate" -> e.success() == null
          ? String.format(Locale.ROOT, "[harness r%-2d] it %d invalid %s", e.round(), e.iteration(),
              e.note())
          : String.format(Locale.ROOT,
              "[harness r%-2d] it %d  success %.3f  turns %.1f  %s", e.round(), e.iteration(),
              e.success(), e.meanTurns(), e.note());
      case "accept" -> String.format(Locale.ROOT,
          "[harness r%-2d] accepted %s (success %.3f, turns %.1f, from iteration %d)", e.round(),
          e.note(), e.success(), e.meanTurns(), e.iteration());
      default -> e.toString();
    };
  }

  static String status(WhaleStatus s) {
    return String.format(Locale.ROOT,
        "phase %s%s%s, round %d, step %d/%d, harness iteration %d%n"
            + "rollouts %d (test %d), best mean@8 %.3f at %s (rollouts %d)%n"
            + "checkpoint %s%nharness %s (%s)%nphase workflow %s; continued as new %d times",
        s.phase(), s.paused() ? " (paused)" : "", s.stopRequested() ? " (stopping)" : "",
        s.round(), s.step(), s.budgetSteps(), s.harnessIteration(), s.rollouts(),
        s.testRollouts(), s.bestMeanAt8(), s.bestAt(), s.rolloutsAtBest(), s.checkpointRef(),
        s.harnessName(), s.harnessRef(),
        s.phaseWorkflowId() == null ? "none (between phases)" : s.phaseWorkflowId(), s.continuedAsNew())
        + (s.rejected() == null ? "" : s.rejected().stream().map(r -> "\n" + r).reduce("", String::concat));
  }

  static String result(ExperimentSpec spec, WhaleResult r) {
    return RunTable.markdown(spec, r.evaluations(), r.harnessName())
        + String.format(Locale.ROOT,
            "%nbase mean@8 %.3f -> best mean@8 %.3f (%s, after %d training rollouts)%n"
                + "%d rounds, %d RSFT steps, %d training rollouts, %d test rollouts%s%n"
                + "final checkpoint %s%nfinal harness %s (%s)%n",
            r.baseMeanAt8(), r.bestMeanAt8(), r.bestAt(), r.rolloutsAtBest(), r.rounds(),
            r.steps(), r.rollouts(), r.testRollouts(), r.stopped() ? " (stopped early)" : "",
            r.checkpointRef(), r.harnessName(), r.harnessRef());
  }

  static String comparison(whale.workflows.ComparisonResult r) {
    return r.report().table() + String.format(Locale.ROOT, "%nplot: %s%nreport: %s%n",
        r.report().pngPath(), r.report().htmlPath());
  }
}
