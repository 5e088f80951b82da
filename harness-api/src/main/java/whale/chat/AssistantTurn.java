package whale.chat;

import java.util.List;

/**
 * The assistant's turn as a harness sees it.
 *
 * @param text everything the model wrote (after the stop strings' cut)
 * @param content the text outside its tool-call blocks, trimmed: the answer when there are no calls
 * @param toolCalls the well-formed calls, in order
 * @param errors one message per malformed call ("tool call 2: ..."), for the harness to answer with
 */
public record AssistantTurn(String text, String content, List<FunctionCall> toolCalls, List<String> errors) {
  public AssistantTurn {
    toolCalls = List.copyOf(toolCalls);
    errors = List.copyOf(errors);
  }

  /** The turn as the next request's assistant message: the content and the parsed calls. */
  public Message message() {
    return Message.assistant(content, toolCalls);
  }

  public boolean callsTools() {
    return !toolCalls.isEmpty() || !errors.isEmpty();
  }
}
