package whale.workflows.schedule;

/**
 * The adaptive harness-phase rule: at least {@code minIterations} iterations (6), then stop once
 * {@code patience} iterations (2) have passed without a strictly better best score, and never more
 * than {@code maxIterations} (15). Iteration 1 is the re-score of the incoming harness.
 */
public record HarnessPatience(int minIterations, int patience, int maxIterations) {
  public static final HarnessPatience DEFAULT = new HarnessPatience(6, 2, 15);

  public HarnessPatience {
    if (minIterations < 1 || patience < 1 || maxIterations < minIterations) {
      throw new IllegalArgumentException("need 1 <= minIterations <= maxIterations, patience >= 1");
    }
  }

  /**
   * Whether another iteration follows, after {@code iterations} done, the best score having last
   * strictly improved at iteration {@code bestIteration}.
   */
  public boolean continues(int iterations, int bestIteration) {
    if (iterations >= maxIterations) {
      return false;
    }
    if (iterations < minIterations) {
      return true;
    }
    return iterations - bestIteration < patience;
  }
}
