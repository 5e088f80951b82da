package whale.task;

/** The three disjoint data roles of the method: RSFT prompts, harness scoring, test reporting. */
public enum Split {
  WEIGHT,
  HARNESS,
  TEST
}
