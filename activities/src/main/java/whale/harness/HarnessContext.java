package whale.harness;

/** What a harness may do during an episode. Every call is recorded in the episode's trace. */
public interface HarnessContext {
  /**
   * One model call: the completion of {@code prompt}, stopping at the first newline (included) or
   * after {@code maxNewTokens}. Counts one turn; calling beyond {@link #turnBudget()} ends the episode
   * with reward 0.
   */
  String generate(String prompt, int maxNewTokens);

  /** Calls the task tool {@code name}; unknown tools throw IllegalArgumentException. */
  String tool(String name, String input);

  /** Model calls made so far. */
  int turnsUsed();

  /** Most model calls allowed in this episode. */
  int turnBudget();

  /** Adds a free-text note to the trace. */
  void note(String text);
}
