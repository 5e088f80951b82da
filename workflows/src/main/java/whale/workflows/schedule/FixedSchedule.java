package whale.workflows.schedule;

/**
 * The fixed WHALE schedule in steps: a weight phase of E epochs of RSFT steps, then a harness phase
 * of I iterations, repeated until the weight budget is spent (at most {@code maxRounds} rounds), with
 * no harness phase after the budget runs out.
 *
 * @param stepsPerEpoch RSFT steps that make one pass over D_weight
 * @param stepsPerWeightPhase E epochs in steps (at least one)
 * @param budgetSteps the whole weight budget in steps
 * @param iterationsPerHarnessPhase I, counting the re-score of the incoming harness as iteration 1
 * @param maxRounds a round is one weight phase and the harness phase after it
 */
public record FixedSchedule(
    int stepsPerEpoch, int stepsPerWeightPhase, int budgetSteps, int iterationsPerHarnessPhase,
    int maxRounds) {

  public FixedSchedule {
    if (stepsPerEpoch < 1 || stepsPerWeightPhase < 1 || budgetSteps < 1
        || iterationsPerHarnessPhase < 1 || maxRounds < 1) {
      throw new IllegalArgumentException("schedule sizes must be positive");
    }
  }

  public static FixedSchedule of(
      int weightProblems, int promptsPerStep, double epochsPerPhase, double budgetEpochs,
      int iterationsPerPhase, int maxRounds) {
    int spe = PersistentSampler.batchesPerEpoch(weightProblems, promptsPerStep);
    int phase = Math.max(1, (int) Math.round(epochsPerPhase * spe));
    int budget = Math.max(1, (int) Math.round(budgetEpochs * spe));
    return new FixedSchedule(spe, phase, budget, iterationsPerPhase, maxRounds);
  }

  /** Whether round {@code round} (1-based) starts, given the steps already done. */
  public boolean startsRound(int round, int stepsDone) {
    return round <= maxRounds && stepsDone < budgetSteps;
  }

  /** Steps the weight phase of a round takes, never past the budget. */
  public int weightSteps(int stepsDone) {
    return Math.max(0, Math.min(stepsPerWeightPhase, budgetSteps - stepsDone));
  }

  /** A harness phase follows a weight phase only while weight budget remains. */
  public boolean harnessPhaseAfter(int stepsDone) {
    return stepsDone < budgetSteps;
  }
}
