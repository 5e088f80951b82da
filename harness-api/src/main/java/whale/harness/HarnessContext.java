package whale.harness;

/** What a harness may do during an episode. Every call is recorded in the episode's trace. */
public interface HarnessContext {
  /**
   * One model call: the completion of {@code prompt}, stopping at the first newline (included) or
   * after {@code maxNewTokens}. Counts one turn; calling beyond {@link #turnBudget()} ends the episode
   * with reward 0.
   */
  String generate(String prompt, int maxNewTokens);

  /**
   * One chat turn: the model's own chat template renders {@code messages} with {@code options}'
   * tools and opens the assistant's turn; the model writes until its end of turn. The reply's tool
   * calls (Hermes {@code <tool_call>} blocks) come parsed, a malformed one as an error message.
   * Counts one turn, like {@link #generate}. A conversation longer than the model's context ends
   * the episode with reward 0; a template that refuses the conversation throws
   * IllegalArgumentException naming the template.
   */
  default whale.chat.AssistantTurn chat(java.util.List<whale.chat.Message> messages,
      whale.chat.ChatOptions options) {
    throw new UnsupportedOperationException("this context has no chat model");
  }

  /** The task's tools, described for a chat template. */
  default java.util.List<whale.chat.ToolSchema> tools() {
    return java.util.List.of();
  }

  /** Calls the task tool {@code name}; unknown tools throw IllegalArgumentException. */
  String tool(String name, String input);

  /** Model calls made so far. */
  int turnsUsed();

  /** Most model calls allowed in this episode. */
  int turnBudget();

  /** Adds a free-text note to the trace. */
  void note(String text);
}
