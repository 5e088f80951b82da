package whale.chat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Conversations and tools in the OpenAI / transformers JSON form: messages
 * {@code {"role", "content", "tool_calls": [{"type": "function", "function": {"name", "arguments"}}],
 * "name"}}, tools {@code {"type": "function", "function": {"name", "description", "parameters"}}}
 * (or the bare function object). Errors name the item and the field.
 */
public final class ChatJson {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<LinkedHashMap<String, Object>> MAP = new TypeReference<>() { };

  private ChatJson() {}

  public static List<Message> messages(JsonNode array) {
    if (array == null || !array.isArray()) {
      throw new IllegalArgumentException("messages must be a JSON array of message objects");
    }
    List<Message> out = new ArrayList<>();
    for (int i = 0; i < array.size(); i++) {
      JsonNode m = array.get(i);
      String where = "message " + i;
      if (!m.isObject() || !m.path("role").isTextual()) {
        throw new IllegalArgumentException(where + ": needs a string \"role\"");
      }
      JsonNode content = m.get("content");
      if (content != null && !content.isNull() && !content.isTextual()) {
        throw new IllegalArgumentException(where + ": \"content\" must be a string");
      }
      List<FunctionCall> calls = new ArrayList<>();
      JsonNode tc = m.path("tool_calls");
      for (int j = 0; j < tc.size(); j++) {
        JsonNode f = tc.get(j).has("function") ? tc.get(j).get("function") : tc.get(j);
        if (!f.path("name").isTextual()) {
          throw new IllegalArgumentException(where + ": tool_calls[" + j + "] needs a string \"name\"");
        }
        try {
          calls.add(new FunctionCall(f.get("name").asText(), ToolCalls.arguments(f.get("arguments"))));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(where + ": tool_calls[" + j + "]: " + e.getMessage());
        }
      }
      try {
        out.add(new Message(m.get("role").asText(), content == null || content.isNull() ? "" : content.asText(),
            calls, m.path("name").isTextual() ? m.get("name").asText() : null));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage());
      }
    }
    return out;
  }

  public static List<ToolSchema> tools(JsonNode array) {
    if (array == null || array.isNull() || array.isMissingNode()) {
      return List.of();
    }
    if (!array.isArray()) {
      throw new IllegalArgumentException("tools must be a JSON array of tool objects");
    }
    List<ToolSchema> out = new ArrayList<>();
    for (int i = 0; i < array.size(); i++) {
      JsonNode f = array.get(i).has("function") ? array.get(i).get("function") : array.get(i);
      if (!f.path("name").isTextual()) {
        throw new IllegalArgumentException("tool " + i + ": needs a string \"name\"");
      }
      JsonNode p = f.get("parameters");
      if (p != null && !p.isObject()) {
        throw new IllegalArgumentException("tool " + i + ": \"parameters\" must be a JSON schema object");
      }
      out.add(new ToolSchema(f.get("name").asText(), f.path("description").asText(""),
          p == null ? null : JSON.convertValue(p, MAP)));
    }
    return out;
  }
}
