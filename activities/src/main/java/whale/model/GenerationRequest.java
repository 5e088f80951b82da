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
 */
public record GenerationRequest(String prompt, long seed, int maxNewTokens, boolean chat) {
  public GenerationRequest(String prompt, long seed, int maxNewTokens) {
    this(prompt, seed, maxNewTokens, false);
  }
}
