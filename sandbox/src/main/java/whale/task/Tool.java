package whale.task;

/** A tool a harness may call through its context: text in, text out, deterministic. */
public interface Tool {
  String name();

  String description();

  String apply(String input);

  /** The tool as a chat template offers it: one string parameter, {@code input}. */
  default whale.chat.ToolSchema schema() {
    return whale.chat.ToolSchema.ofString(name(), description(), "input", "the tool's input");
  }
}
