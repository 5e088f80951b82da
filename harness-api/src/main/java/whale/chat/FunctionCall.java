package whale.chat;

import java.util.LinkedHashMap;
import java.util.Map;

/** A tool call the model made: the tool's name and its arguments (a JSON object, in order). */
public record FunctionCall(String name, Map<String, Object> arguments) {
  public FunctionCall {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a tool call needs a name");
    }
    arguments = arguments == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(arguments));
  }

  Map<String, Object> toTemplate() {
    Map<String, Object> function = new LinkedHashMap<>();
    function.put("name", name);
    function.put("arguments", arguments);
    Map<String, Object> call = new LinkedHashMap<>();
    call.put("type", "function");
    call.put("function", function);
    return call;
  }
}
