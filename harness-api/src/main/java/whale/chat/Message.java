package whale.chat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One message of a conversation, as chat templates see it: {@code role} is {@code system},
 * {@code user}, {@code assistant} or {@code tool}; an assistant message may carry tool calls, a tool
 * message carries one tool's result (and the name of the tool that produced it).
 */
public record Message(String role, String content, List<FunctionCall> toolCalls, String name) {
  public static final List<String> ROLES = List.of("system", "user", "assistant", "tool");

  public Message {
    if (!ROLES.contains(role)) {
      throw new IllegalArgumentException("message role must be one of " + ROLES + ", got '" + role + "'");
    }
    content = content == null ? "" : content;
    toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
    if (!toolCalls.isEmpty() && !role.equals("assistant")) {
      throw new IllegalArgumentException("only an assistant message carries tool calls, not a " + role + " one");
    }
  }

  public static Message system(String content) {
    return new Message("system", content, List.of(), null);
  }

  public static Message user(String content) {
    return new Message("user", content, List.of(), null);
  }

  public static Message assistant(String content) {
    return new Message("assistant", content, List.of(), null);
  }

  public static Message assistant(String content, List<FunctionCall> calls) {
    return new Message("assistant", content, calls, null);
  }

  public static Message tool(String name, String content) {
    return new Message("tool", content, List.of(), name);
  }

  /**
   * The message as transformers passes it to a template: keys absent rather than empty (templates
   * test {@code message.tool_calls is defined}), tool calls in the OpenAI form.
   */
  Map<String, Object> toTemplate() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("role", role);
    m.put("content", content);
    if (!toolCalls.isEmpty()) {
      m.put("tool_calls", toolCalls.stream().map(FunctionCall::toTemplate).toList());
    }
    if (name != null) {
      m.put("name", name);
    }
    return m;
  }
}
