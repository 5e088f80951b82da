package whale.workflows.schedule;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import whale.workflows.Adjustment;
import whale.workflows.ExperimentSpec;
import whale.workflows.Schedule;

/**
 * A run's limits in steps and iterations: the weight budget, the patience rule's sizes and the
 * adaptive harness rule. Built from the spec, changed only by validated {@link Adjustment}s. Pure.
 */
public record Limits(int stepsPerEpoch, int stepsPerWeightPhase, int budgetSteps,
    int iterationsPerHarnessPhase, int maxRounds, int windowSteps, int burnInSteps, int patienceSteps,
    HarnessPatience harness) {

  public static Limits of(ExperimentSpec spec) {
    var p = spec.phases();
    FixedSchedule f = FixedSchedule.of(spec.data().weightProblems(), spec.rsft().promptsPerStep(),
        p.weightEpochsPerPhase(), p.weightBudgetEpochs(), p.harnessIterationsPerPhase(), p.maxRounds());
    PatienceRule r = PatienceRule.ofEpochFractions(f.stepsPerEpoch(), p.windowEpochs(),
        p.burnInEpochs(), p.patienceEpochs());
    return new Limits(f.stepsPerEpoch(), f.stepsPerWeightPhase(), f.budgetSteps(),
        f.iterationsPerHarnessPhase(), f.maxRounds(), r.window(), r.burnIn(), r.patience(),
        new HarnessPatience(p.harnessMinIterations(), p.harnessPatience(), p.harnessMaxIterations()));
  }

  public FixedSchedule fixed() {
    return new FixedSchedule(stepsPerEpoch, stepsPerWeightPhase, budgetSteps,
        iterationsPerHarnessPhase, maxRounds);
  }

  public PatienceRule patienceRule() {
    return new PatienceRule(windowSteps, burnInSteps, patienceSteps);
  }

  public PhasePlanner planner(Schedule schedule) {
    return new PhasePlanner(schedule, fixed(), harness);
  }

  /**
   * Why {@code a} cannot be applied now (empty when it can): nothing to change, a budget below the
   * steps already done, a patience for a schedule without one, values out of range.
   */
  public List<String> problems(Adjustment a, Schedule schedule, int stepsDone) {
    List<String> out = new ArrayList<>();
    if (a == null || (a.weightBudgetEpochs() == null && a.patienceEpochs() == null
        && a.harnessPatience() == null && a.harnessMaxIterations() == null)) {
      out.add("nothing to change: set weightBudgetEpochs, patienceEpochs, harnessPatience or "
          + "harnessMaxIterations");
      return out;
    }
    if (a.weightBudgetEpochs() != null) {
      double e = a.weightBudgetEpochs();
      if (!(e > 0 && e <= 1000)) {
        out.add("weightBudgetEpochs: must be in (0, 1000], got " + e);
      } else if (steps(e) < stepsDone) {
        out.add(String.format(Locale.ROOT, "weightBudgetEpochs: %s epochs is %d steps, below the %d "
            + "steps already done (%.2f epochs)", e, steps(e), stepsDone,
            stepsDone / (double) stepsPerEpoch));
      }
    }
    boolean adaptive = schedule == Schedule.WHALE_ADAPTIVE;
    if (a.patienceEpochs() != null) {
      if (!adaptive) {
        out.add("patienceEpochs: schedule " + schedule + " has no patience rule (only whale-adaptive)");
      } else if (!(a.patienceEpochs() > 0 && a.patienceEpochs() <= 1000)) {
        out.add("patienceEpochs: must be in (0, 1000], got " + a.patienceEpochs());
      }
    }
    if (a.harnessPatience() != null || a.harnessMaxIterations() != null) {
      if (!adaptive) {
        out.add("harnessPatience/harnessMaxIterations: schedule " + schedule
            + " runs fixed harness phases (only whale-adaptive has a harness patience rule)");
      } else {
        int patience = a.harnessPatience() == null ? harness.patience() : a.harnessPatience();
        int max = a.harnessMaxIterations() == null ? harness.maxIterations() : a.harnessMaxIterations();
        if (patience < 1 || patience > 1000) {
          out.add("harnessPatience: must be in [1, 1000], got " + patience);
        }
        if (max < harness.minIterations()) {
          out.add("harnessMaxIterations: must be at least the minimum of " + harness.minIterations()
              + " iterations, got " + max);
        } else if (max > 1000) {
          out.add("harnessMaxIterations: must be at most 1000, got " + max);
        }
      }
    }
    return out;
  }

  /**
   * Why these limits cannot be a run's (empty when they can): what a phase checks when they arrive
   * by signal, since anyone can send one, not only the parent.
   */
  public List<String> problems() {
    List<String> out = new ArrayList<>();
    atLeast(out, "stepsPerEpoch", stepsPerEpoch, 1);
    atLeast(out, "stepsPerWeightPhase", stepsPerWeightPhase, 1);
    atLeast(out, "budgetSteps", budgetSteps, 1);
    atLeast(out, "iterationsPerHarnessPhase", iterationsPerHarnessPhase, 1);
    atLeast(out, "maxRounds", maxRounds, 1);
    atLeast(out, "windowSteps", windowSteps, 1);
    atLeast(out, "burnInSteps", burnInSteps, 0);
    atLeast(out, "patienceSteps", patienceSteps, 1);
    if (harness == null) {
      out.add("harness: must be set");
    } else {
      atLeast(out, "harness.minIterations", harness.minIterations(), 1);
      atLeast(out, "harness.patience", harness.patience(), 1);
      atLeast(out, "harness.maxIterations", harness.maxIterations(), Math.max(1, harness.minIterations()));
    }
    return out;
  }

  private static void atLeast(List<String> out, String field, int value, int min) {
    if (value < min) {
      out.add(field + ": must be at least " + min + ", got " + value);
    }
  }

  /** The limits after {@code a}, which must have no {@link #problems}. */
  public Limits adjusted(Adjustment a) {
    int budget = a.weightBudgetEpochs() == null ? budgetSteps : steps(a.weightBudgetEpochs());
    int patience = a.patienceEpochs() == null ? patienceSteps : steps(a.patienceEpochs());
    HarnessPatience h = new HarnessPatience(harness.minIterations(),
        a.harnessPatience() == null ? harness.patience() : a.harnessPatience(),
        a.harnessMaxIterations() == null ? harness.maxIterations() : a.harnessMaxIterations());
    return new Limits(stepsPerEpoch, stepsPerWeightPhase, budget, iterationsPerHarnessPhase,
        maxRounds, windowSteps, burnInSteps, patience, h);
  }

  /** Epochs to steps, as the schedule rounds them (at least one step). */
  private int steps(double epochs) {
    return Math.max(1, (int) Math.round(epochs * stepsPerEpoch));
  }
}
