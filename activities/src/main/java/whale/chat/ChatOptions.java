package whale.chat;

import java.util.List;

/**
 * One chat turn's options.
 *
 * @param maxNewTokens most tokens of the assistant's turn (clamped to the model's cap)
 * @param stop the turn's text is cut after the first of these (the model's end of turn always ends it)
 * @param tools the tools offered to the model, rendered by the chat template
 */
public record ChatOptions(int maxNewTokens, List<String> stop, List<ToolSchema> tools) {
  public ChatOptions {
    stop = stop == null ? List.of() : List.copyOf(stop);
    tools = tools == null ? List.of() : List.copyOf(tools);
  }

  public static ChatOptions of(int maxNewTokens) {
    return new ChatOptions(maxNewTokens, List.of(), List.of());
  }

  public ChatOptions withTools(List<ToolSchema> v) {
    return new ChatOptions(maxNewTokens, stop, v);
  }

  public ChatOptions withStop(List<String> v) {
    return new ChatOptions(maxNewTokens, v, tools);
  }
}
