package whale.harness;

import java.util.ArrayList;
import java.util.List;
import whale.chat.AssistantTurn;
import whale.chat.ChatOptions;
import whale.chat.FunctionCall;
import whale.chat.Message;
import whale.chat.PyJson;
import whale.chat.ToolSchema;
import whale.task.Problem;

/**
 * The common shape of a chat agent, as the paper's harnesses are: a system prompt, a user prompt
 * made from the problem, the task's tools, and a loop that runs the tools the model calls and shows
 * it their results until it answers (or {@link #maxTurns()} is reached). A harness extends this and
 * overrides what differs, usually the prompts and {@link #answer}.
 */
public abstract class ChatHarness implements Harness {
  protected abstract String systemPrompt();

  protected abstract String userPrompt(Problem problem);

  /** The tools offered; the task's own by default, none to make a plain chat. */
  protected List<ToolSchema> tools(HarnessContext ctx) {
    return ctx.tools();
  }

  protected int maxTurns() {
    return 4;
  }

  protected int maxNewTokens() {
    return 64;
  }

  /** The answer in the model's final reply. */
  protected String answer(String reply) {
    return reply.strip();
  }

  @Override
  public HarnessResult solve(Problem problem, HarnessContext ctx) {
    ChatOptions options = ChatOptions.of(maxNewTokens()).withTools(tools(ctx));
    return HarnessResult.of(answer(converse(ctx, systemPrompt(), userPrompt(problem), options,
        maxTurns())));
  }

  /**
   * One conversation, the loop of every chat agent: the system and user messages, then up to
   * {@code maxTurns} model turns, each tool call run and its result shown as a tool message, until
   * the model answers without calling a tool. Returns that last turn's content (outside tool calls).
   */
  public static String converse(HarnessContext ctx, String system, String user, ChatOptions options,
      int maxTurns) {
    List<Message> messages = new ArrayList<>();
    messages.add(Message.system(system));
    messages.add(Message.user(user));
    String last = "";
    for (int turn = 0; turn < maxTurns; turn++) {
      AssistantTurn reply = ctx.chat(messages, options);
      messages.add(reply.message());
      last = reply.content();
      if (!reply.callsTools()) {
        break;
      }
      for (String error : reply.errors()) {
        messages.add(Message.tool("error", error));
      }
      for (FunctionCall call : reply.toolCalls()) {
        String result;
        try {
          result = ctx.tool(call.name(), input(call));
        } catch (IllegalArgumentException e) {
          result = "error: " + e.getMessage(); // an unknown tool or a bad input: the model sees why
        }
        messages.add(Message.tool(call.name(), result));
      }
    }
    return last;
  }

  /** A task tool takes one string: the call's only argument, or all of them as JSON. */
  static String input(FunctionCall call) {
    if (call.arguments().size() == 1) {
      Object v = call.arguments().values().iterator().next();
      return v instanceof String s ? s : PyJson.dumps(v);
    }
    return PyJson.dumps(call.arguments());
  }
}
