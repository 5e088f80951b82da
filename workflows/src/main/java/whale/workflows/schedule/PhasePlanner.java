package whale.workflows.schedule;

import whale.workflows.Schedule;

/**
 * Which phase comes next, for every schedule whale runs. Pure: the parent workflow asks it after
 * each phase with where the run stands, so the same decision holds after a crash, a replay or a
 * continue-as-new.
 *
 * <ul>
 *   <li>{@code whale}: weight phases of E epochs alternating with harness phases of I iterations
 *       until the weight budget is spent (at most {@code maxRounds} rounds); no harness phase after
 *       the budget runs out.
 *   <li>{@code fst}: the same, but the harness search may change only prompt text.
 *   <li>{@code whale-adaptive}: the same alternation; a weight phase runs until the patience rule
 *       fires (or the budget ends) and a harness phase follows {@link HarnessPatience}.
 *   <li>{@code weight-only}: one weight phase of the whole budget with h0.
 *   <li>{@code harness-only}: as many harness phases of I iterations as {@code whale} would run, with
 *       the base weights.
 *   <li>{@code stagewise}: one weight phase of the whole budget, then one harness phase of all the
 *       iterations {@code whale} would run.
 * </ul>
 */
public final class PhasePlanner {
  public enum Kind { WEIGHT, HARNESS, DONE }

  /**
   * A phase to run.
   *
   * @param stepLimit weight: the phase ends at this global step count at the latest
   * @param adaptiveWeight weight: the patience rule may end it earlier
   * @param iterations harness: iterations to run (fixed) or the most to run (adaptive)
   * @param harnessRule harness: the adaptive stopping rule, or null for exactly {@code iterations}
   * @param promptOnly harness: only prompt text may change (the Fast-Slow control)
   */
  public record Phase(Kind kind, int round, int stepLimit, boolean adaptiveWeight, int iterations,
      HarnessPatience harnessRule, boolean promptOnly) {
    static final Phase DONE = new Phase(Kind.DONE, 0, 0, false, 0, null, false);
  }

  /** Where the run stands after its last phase ({@code last} null before the first). */
  public record Progress(int round, int stepsDone, Kind last) {
    public static final Progress START = new Progress(0, 0, null);
  }

  private final Schedule schedule;
  private final FixedSchedule fixed;
  private final HarnessPatience adaptiveHarness;

  public PhasePlanner(Schedule schedule, FixedSchedule fixed, HarnessPatience adaptiveHarness) {
    this.schedule = schedule;
    this.fixed = fixed;
    this.adaptiveHarness = adaptiveHarness;
  }

  public Phase next(Progress p) {
    boolean afterWeight = p.last() == Kind.WEIGHT;
    return switch (schedule) {
      case WHALE, FST -> afterWeight
          ? (fixed.harnessPhaseAfter(p.stepsDone())
              ? harness(p.round(), fixed.iterationsPerHarnessPhase(), null) : Phase.DONE)
          : (fixed.startsRound(p.round() + 1, p.stepsDone())
              ? weight(p.round() + 1, p.stepsDone() + fixed.weightSteps(p.stepsDone()), false)
              : Phase.DONE);
      case WHALE_ADAPTIVE -> afterWeight
          ? (fixed.harnessPhaseAfter(p.stepsDone())
              ? harness(p.round(), adaptiveHarness.maxIterations(), adaptiveHarness) : Phase.DONE)
          : (fixed.startsRound(p.round() + 1, p.stepsDone())
              ? weight(p.round() + 1, fixed.budgetSteps(), true) : Phase.DONE);
      case WEIGHT_ONLY -> p.last() == null && fixed.budgetSteps() > p.stepsDone()
          ? weight(1, fixed.budgetSteps(), false) : Phase.DONE;
      case HARNESS_ONLY -> p.round() < plannedHarnessPhases()
          ? harness(p.round() + 1, fixed.iterationsPerHarnessPhase(), null) : Phase.DONE;
      case STAGEWISE -> p.last() == null
          ? weight(1, fixed.budgetSteps(), false)
          : afterWeight && plannedHarnessPhases() > 0
              ? harness(2, plannedHarnessPhases() * fixed.iterationsPerHarnessPhase(), null)
              : Phase.DONE;
    };
  }

  /** The number of harness phases the fixed {@code whale} schedule runs within the budget. */
  public int plannedHarnessPhases() {
    int steps = 0;
    int phases = 0;
    for (int round = 1; fixed.startsRound(round, steps); round++) {
      steps += fixed.weightSteps(steps);
      if (!fixed.harnessPhaseAfter(steps)) {
        break;
      }
      phases++;
    }
    return phases;
  }

  private Phase weight(int round, int stepLimit, boolean adaptive) {
    return new Phase(Kind.WEIGHT, round, stepLimit, adaptive, 0, null, false);
  }

  private Phase harness(int round, int iterations, HarnessPatience rule) {
    return new Phase(Kind.HARNESS, round, 0, false, iterations, rule, schedule == Schedule.FST);
  }
}
