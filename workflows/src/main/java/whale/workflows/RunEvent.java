package whale.workflows;

/**
 * One line of the run's record: an RSFT step, a test evaluation, a scored harness candidate or an
 * acceptance. Fields that do not apply to a kind are null.
 *
 * @param kind "rsft-step", "test-eval", "candidate", "accept"
 * @param phase "base", "weight" or "harness"
 * @param rollouts training rollouts spent when the event happened (weight steps + harness
 *     iterations; test evaluation is counted apart)
 * @param atMillis workflow time of a test evaluation's result (ms since the epoch; null for other
 *     kinds and in histories recorded before it existed): the report's wall-time axis
 */
public record RunEvent(
    String kind,
    String phase,
    int round,
    int step,
    int iteration,
    long rollouts,
    Double trainReward,
    Integer accepted,
    Double loss,
    Double meanAt8,
    Double passAt8,
    Double majAt8,
    Double success,
    Double meanTurns,
    String checkpointRef,
    String harnessRef,
    String note,
    Long atMillis) {

  static RunEvent step(int round, int step, long rollouts, double reward, int accepted, double loss,
      String ckpt) {
    return new RunEvent("rsft-step", "weight", round, step, 0, rollouts, reward, accepted, loss,
        null, null, null, null, null, ckpt, null, null, null);
  }

  static RunEvent testEval(String phase, int round, int step, long rollouts, double mean,
      double pass, double maj, double turns, String ckpt, String harness, Long atMillis) {
    return new RunEvent("test-eval", phase, round, step, 0, rollouts, null, null, null, mean, pass,
        maj, null, turns, ckpt, harness, null, atMillis);
  }

  static RunEvent candidate(int round, int iteration, long rollouts, String name, Double success,
      Double turns, String harness, String error) {
    return new RunEvent("candidate", "harness", round, 0, iteration, rollouts, null, null, null,
        null, null, null, success, turns, null, harness, error == null ? name : name + ": " + error, null);
  }

  static RunEvent accept(int round, int iteration, long rollouts, String name, double success,
      double turns, String harness) {
    return new RunEvent("accept", "harness", round, 0, iteration, rollouts, null, null, null, null,
        null, null, success, turns, null, harness, name, null);
  }
}
