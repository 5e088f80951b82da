package whale.chat;

import java.util.List;

/** What a chat model call was asked: the conversation and the tools offered (traces, training). */
public record ChatCall(List<Message> messages, List<ToolSchema> tools) {
  public ChatCall {
    messages = List.copyOf(messages);
    tools = tools == null ? List.of() : List.copyOf(tools);
  }
}
