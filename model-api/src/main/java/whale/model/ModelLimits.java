package whale.model;

/**
 * What one model call of an episode may ask of a model: the longest prompt in characters and the
 * most new tokens. Sized per model, because the built-in character model sees 160 characters while
 * a Hugging Face checkpoint may see thousands of tokens.
 *
 * @param maxPromptChars a longer prompt fails the call (a memory bound; a prompt that fits here but
 *     not in the model's context is cut from the left, as the model's window slides)
 * @param maxNewTokens requested new tokens are clamped to 1..this
 */
public record ModelLimits(int maxPromptChars, int maxNewTokens) {
  /** The built-in character model: 64 new characters, prompts well beyond its 160-character window. */
  public static final ModelLimits BUILTIN = new ModelLimits(4096, 64);

  public ModelLimits {
    if (maxPromptChars < 1 || maxNewTokens < 1) {
      throw new IllegalArgumentException("model limits must be positive: " + maxPromptChars + ", "
          + maxNewTokens);
    }
  }

  /**
   * A model with a context of {@code maxPositions} tokens: a completion may take half of it (the
   * prompt keeps the other half), at most 4096 tokens; a prompt may have 8 characters per position
   * (English BPE averages about 4), so no prompt that could fit is refused.
   */
  public static ModelLimits forContext(int maxPositions) {
    return new ModelLimits((int) Math.min(Integer.MAX_VALUE / 2, 8L * maxPositions),
        Math.max(1, Math.min(4096, maxPositions / 2)));
  }
}
