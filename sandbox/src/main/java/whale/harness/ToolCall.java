package whale.harness;

/** One tool call of an episode (input and output as recorded, possibly truncated to the trace cap). */
public record ToolCall(String name, String input, String output) {}
