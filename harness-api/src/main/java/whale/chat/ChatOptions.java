package whale.chat;

import java.util.List;

/**
 * One chat turn's options.
 *
 * @param maxNewTokens most tokens of the assistant's turn (clamped to the model's cap)
 * @param stop the turn's text is cut after the first of these (the model's end of turn always ends it)
 * @param tools the tools offered to the model, rendered by the chat template
 * @param temperature this turn's sampling temperature, or null for the run's; a value above the
 *     spec's bound ({@code harness.maxTemperature}, by default the run's temperature) is lowered to it
 */
public record ChatOptions(int maxNewTokens, List<String> stop, List<ToolSchema> tools, Double temperature) {
  public ChatOptions {
    stop = stop == null ? List.of() : List.copyOf(stop);
    tools = tools == null ? List.of() : List.copyOf(tools);
    if (temperature != null && !(temperature >= 0 && temperature < Double.POSITIVE_INFINITY)) {
      throw new IllegalArgumentException("ChatOptions.temperature must be a finite number >= 0, got "
          + temperature);
    }
  }

  public ChatOptions(int maxNewTokens, List<String> stop, List<ToolSchema> tools) {
    this(maxNewTokens, stop, tools, null);
  }

  public static ChatOptions of(int maxNewTokens) {
    return new ChatOptions(maxNewTokens, List.of(), List.of());
  }

  public ChatOptions withTools(List<ToolSchema> v) {
    return new ChatOptions(maxNewTokens, stop, v, temperature);
  }

  public ChatOptions withStop(List<String> v) {
    return new ChatOptions(maxNewTokens, v, tools, temperature);
  }

  /** This turn at temperature {@code v} (0 is greedy), within the spec's bound. */
  public ChatOptions withTemperature(double v) {
    return new ChatOptions(maxNewTokens, stop, tools, v);
  }
}
