package whale.model;

/**
 * One supervised example: the loss covers {@code completion} only; {@code prompt} (the question, tool
 * output and anything else the harness wrote) is context and is masked out.
 */
public record SftExample(String prompt, String completion) {}
