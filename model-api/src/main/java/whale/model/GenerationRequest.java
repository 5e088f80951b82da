package whale.model;

/**
 * One prompt to complete.
 *
 * @param prompt text the completion continues
 * @param seed seed of this request's own sampling stream: the same request gives the same completion
 *     whatever else shares its batch
 * @param maxNewTokens generation stops after this many tokens, or at the first newline
 * @param chat the prompt is a rendered chat template: the completion is the assistant's turn, which
 *     ends at the model's end of turn (EOS) rather than at a newline, and a prompt that does not fit
 *     the model's context fails the call instead of losing its start (its system prompt)
 * @param temperature this request's own sampling temperature (a chat call's {@code
 *     ChatOptions.temperature}, already within the spec's bound), or null for the batch's; every
 *     generator honours it (one that samples a batch at one temperature groups rows by it, {@link
 *     Generator#byTemperature})
 */
public record GenerationRequest(String prompt, long seed, int maxNewTokens, boolean chat,
    Double temperature) {
  public GenerationRequest {
    if (temperature != null && !(temperature >= 0 && temperature < Double.POSITIVE_INFINITY)) {
      throw new IllegalArgumentException("temperature must be a finite number >= 0: " + temperature);
    }
  }

  public GenerationRequest(String prompt, long seed, int maxNewTokens, boolean chat) {
    this(prompt, seed, maxNewTokens, chat, null);
  }

  public GenerationRequest(String prompt, long seed, int maxNewTokens) {
    this(prompt, seed, maxNewTokens, false);
  }
}
