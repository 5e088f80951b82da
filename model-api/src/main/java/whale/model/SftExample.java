package whale.model;

import java.util.List;

/**
 * One supervised example: a sequence of parts that alternate between context (masked out: the
 * question, a system prompt, what a tool or the user wrote) and the model's own text (the loss
 * covers it). A single-turn call is {@code [prompt, completion]}; a multi-turn chat is one sequence
 * with every assistant turn trained once.
 *
 * @param parts context, trained, context, trained, ... (an even count; empty strings allowed)
 */
public record SftExample(List<String> parts) {
  public SftExample {
    parts = List.copyOf(parts);
    if (parts.isEmpty() || parts.size() % 2 != 0) {
      throw new IllegalArgumentException("an SFT example alternates context and trained parts: "
          + parts.size() + " parts");
    }
  }

  public SftExample(String prompt, String completion) {
    this(List.of(prompt, completion));
  }

  /** Whether part {@code i} is trained (odd parts are the model's). */
  public static boolean trained(int i) {
    return i % 2 == 1;
  }

  /** The first context part: what the sequence starts from. */
  public String prompt() {
    return parts.get(0);
  }
}
