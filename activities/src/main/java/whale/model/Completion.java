package whale.model;

/**
 * A model completion with its token accounting.
 *
 * @param text the generated text, including the newline that ended it if it stopped on one
 * @param promptTokens tokens of the prompt the model saw (after truncation to its context)
 * @param completionTokens tokens generated
 */
public record Completion(String text, int promptTokens, int completionTokens) {}
