package whale.harness;

/** How an episode ended. Every status but COMPLETED has reward 0. */
public enum EpisodeStatus {
  /** The harness returned an answer; the reward is the verifier's. */
  COMPLETED,
  /** The harness asked for more model calls than the turn budget. */
  TURN_BUDGET_EXCEEDED,
  /** The harness ran longer than the episode timeout without calling the model; it was abandoned. */
  TIMEOUT,
  /** The harness threw, or broke another limit (tool calls, prompt size). */
  ERROR
}
