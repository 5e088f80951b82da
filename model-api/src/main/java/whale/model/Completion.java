package whale.model;

/**
 * A model completion with its token accounting.
 *
 * @param text the generated text, including the newline that ended it if it stopped on one
 * @param promptTokens tokens of the prompt the model saw (after truncation to its context)
 * @param completionTokens tokens generated
 * @param error why the model could not complete this prompt (null when it did), for example a chat
 *     longer than its context; the rest of the batch is unaffected
 */
public record Completion(String text, int promptTokens, int completionTokens, String error) {
  public Completion(String text, int promptTokens, int completionTokens) {
    this(text, promptTokens, completionTokens, null);
  }
}
