package whale.model;

import java.util.List;

/**
 * One supervised example: a sequence of parts that alternate between context (masked out: the
 * question, a system prompt, what a tool or the user wrote) and the model's own text (the loss
 * covers it). A single-turn call is {@code [prompt, completion]}; a multi-turn chat is one sequence
 * with every assistant turn trained once.
 *
 * @param parts context, trained, context, trained, ... (an even count; empty strings allowed)
 * @param sampledIds per part, the token ids a server sampled for it, which training uses instead of
 *     tokenizing the part's text (null, or a null entry: tokenize the text); see {@link SampledTokens}
 */
public record SftExample(List<String> parts, List<int[]> sampledIds) {
  public SftExample {
    parts = List.copyOf(parts);
    if (parts.isEmpty() || parts.size() % 2 != 0) {
      throw new IllegalArgumentException("an SFT example alternates context and trained parts: "
          + parts.size() + " parts");
    }
    if (sampledIds != null) {
      if (sampledIds.size() != parts.size()) {
        throw new IllegalArgumentException(sampledIds.size() + " sampled-id entries for " + parts.size() + " parts");
      }
      sampledIds = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(sampledIds));
    }
  }

  public SftExample(List<String> parts) {
    this(parts, null);
  }

  public SftExample(String prompt, String completion) {
    this(List.of(prompt, completion));
  }

  /** The ids a server sampled for part {@code i}, or null to tokenize its text. */
  public int[] sampledIds(int i) {
    return sampledIds == null ? null : sampledIds.get(i);
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
