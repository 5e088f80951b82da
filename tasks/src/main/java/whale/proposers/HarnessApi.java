package whale.proposers;

/**
 * The harness API as proposers are told it: the openai proposer's system prompt, and API.md in the
 * archive copy the command proposer works in. One text, so both describe the same API.
 */
public final class HarnessApi {
  private HarnessApi() {}

  public static final String TEXT = """
      A harness is Java code implementing
      whale.harness.Harness { HarnessResult solve(whale.task.Problem p, HarnessContext ctx) }.
      HarnessContext:
        String generate(String prompt, int maxNewTokens): one text completion, stops after a newline.
        AssistantTurn chat(List<Message> messages, ChatOptions options): one chat turn; the model's
          own chat template renders the messages and options.tools(); the reply's Hermes
          <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks come parsed.
        List<ToolSchema> tools(): the task's tools, described for chat.
        String tool(String name, String input), int turnsUsed(), int turnBudget(), void note(String).
        Every generate or chat call is one turn; at most turnBudget() per episode.
      whale.chat: Message.system/user/assistant(content[, List<FunctionCall>])/tool(name, content);
        ChatOptions.of(maxNewTokens).withTools(List<ToolSchema>).withStop(List<String>)
          .withTemperature(t) (this turn's sampling temperature, 0 greedy; at most the spec's bound);
        AssistantTurn: text(), content() (outside tool calls), toolCalls() (FunctionCall: name(),
        arguments()), errors() (malformed calls), message() (the turn as the next assistant message).
      whale.harness.ChatHarness: extend it and override systemPrompt(), userPrompt(Problem), and
        optionally tools(ctx), maxTurns(), maxNewTokens(), answer(String): it runs the tool loop;
        ChatHarness.converse(ctx, system, user, options, maxTurns) is that loop for one conversation
        (returns the last turn's content), for a harness that holds several.
      HarnessResult.of(String answer). Problem: id(), question().
      Only java.lang basics (no System, Runtime, Thread, reflection, I/O), java.util, java.util.regex,
      java.util.function, java.util.stream, java.text and the classes above are allowed; anything
      else is rejected at compile time. The model must do the task's reasoning; the harness only
      builds prompts, calls tools and parses text.
      """;
}
