package whale.task;

/** A tool a harness may call through its context: text in, text out, deterministic. */
public interface Tool {
  String name();

  String description();

  String apply(String input);
}
