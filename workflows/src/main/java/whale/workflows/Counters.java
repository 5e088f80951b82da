package whale.workflows;

/**
 * What a run has spent so far, carried in its state and into each weight phase.
 *
 * @param steps RSFT steps done in the whole run
 * @param rollouts training rollouts: weight steps and harness scoring
 * @param testRollouts test evaluation rollouts, counted apart
 */
public record Counters(int steps, long rollouts, long testRollouts) {
  public static final Counters ZERO = new Counters(0, 0, 0);

  Counters withRollouts(long total) {
    return new Counters(steps, total, testRollouts);
  }

  Counters plusTestRollouts(long more) {
    return new Counters(steps, rollouts, testRollouts + more);
  }
}
