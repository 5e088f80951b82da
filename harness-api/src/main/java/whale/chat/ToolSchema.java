package whale.chat;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tool offered to the model: its name, what it does, and its parameters as a JSON schema (an
 * object schema, in order, as the template will print it).
 */
public record ToolSchema(String name, String description, Map<String, Object> parameters) {
  public ToolSchema {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a tool needs a name");
    }
    description = description == null ? "" : description;
    parameters = parameters == null ? Map.of("type", "object", "properties", Map.of())
        : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
  }

  /** A tool of one string parameter, the form every built-in task's tools take. */
  public static ToolSchema ofString(String name, String description, String parameter, String about) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("type", "string");
    p.put("description", about);
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("type", "object");
    schema.put("properties", Map.of(parameter, p));
    schema.put("required", java.util.List.of(parameter));
    return new ToolSchema(name, description, schema);
  }

  /** The OpenAI form transformers passes to templates: {"type": "function", "function": {...}}. */
  Map<String, Object> toTemplate() {
    Map<String, Object> function = new LinkedHashMap<>();
    function.put("name", name);
    function.put("description", description);
    function.put("parameters", parameters);
    Map<String, Object> tool = new LinkedHashMap<>();
    tool.put("type", "function");
    tool.put("function", function);
    return tool;
  }
}
