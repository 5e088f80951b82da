package whale.model;

/**
 * One prompt to complete.
 *
 * @param prompt text the completion continues
 * @param seed seed of this request's own sampling stream: the same request gives the same completion
 *     whatever else shares its batch
 * @param maxNewTokens generation stops after this many tokens, or at the first newline
 */
public record GenerationRequest(String prompt, long seed, int maxNewTokens) {}
