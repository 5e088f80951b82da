package whale.chat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tool calls in the Hermes / Qwen form: {@code <tool_call>{"name": ..., "arguments": {...}}</tool_call>}.
 * A malformed call becomes an error message the harness can answer with, never an exception.
 */
public final class ToolCalls {
  static final String OPEN = "<tool_call>";
  static final String CLOSE = "</tool_call>";
  private static final ObjectMapper JSON = JsonMapper.builder()
      .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  private ToolCalls() {}

  public static AssistantTurn parse(String text) {
    List<FunctionCall> calls = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    StringBuilder content = new StringBuilder();
    int i = 0;
    int n = 0;
    while (true) {
      int open = text.indexOf(OPEN, i);
      if (open < 0) {
        content.append(text, i, text.length());
        break;
      }
      content.append(text, i, open);
      n++;
      int close = text.indexOf(CLOSE, open);
      String body = text.substring(open + OPEN.length(), close < 0 ? text.length() : close).strip();
      if (close < 0) {
        errors.add("tool call " + n + ": no closing " + CLOSE);
        break;
      }
      i = close + CLOSE.length();
      try {
        calls.add(call(body));
      } catch (IllegalArgumentException e) {
        errors.add("tool call " + n + ": " + e.getMessage());
      }
    }
    return new AssistantTurn(text, content.toString().strip(), calls, errors);
  }

  /**
   * A call's arguments: a JSON object, or a string holding one (as the OpenAI API carries them);
   * absent or null is none. Anything else is an IllegalArgumentException saying what is wrong.
   */
  static Map<String, Object> arguments(JsonNode args) {
    if (args != null && args.isTextual()) {
      try {
        args = JSON.readTree(args.asText());
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException("\"arguments\" is a string that is not JSON");
      }
    }
    if (args == null || args.isNull()) {
      return Map.of();
    }
    if (!args.isObject()) {
      throw new IllegalArgumentException("\"arguments\" must be a JSON object");
    }
    return JSON.convertValue(args, new com.fasterxml.jackson.core.type.TypeReference<LinkedHashMap<String, Object>>() { });
  }

  private static FunctionCall call(String body) {
    JsonNode node;
    try {
      node = JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not a JSON object: " + e.getOriginalMessage());
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("not a JSON object");
    }
    JsonNode name = node.get("name");
    if (name == null || !name.isTextual() || name.asText().isEmpty()) {
      throw new IllegalArgumentException("\"name\" must be a non-empty string");
    }
    Map<String, Object> map = arguments(node.get("arguments"));
    return new FunctionCall(name.asText(), map);
  }
}
