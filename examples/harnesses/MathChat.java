import java.util.ArrayList;
import java.util.List;
import whale.chat.AssistantTurn;
import whale.chat.ChatOptions;
import whale.chat.Message;
import whale.chat.ToolSchema;
import whale.harness.ChatHarness;
import whale.harness.HarnessContext;
import whale.harness.HarnessResult;
import whale.task.Problem;

/**
 * A chat harness for the math task: least-to-most as one conversation. The task's "sentences" tool
 * splits the problem; each user turn asks one step with the running value folded in, the model
 * answers it in the same conversation (it sees its earlier answers), and the last answer is the
 * result. RSFT trains on the whole conversation, the model's turns only.
 */
public class MathChat extends ChatHarness {
  @Override
  protected String systemPrompt() {
    return "";
  }

  @Override
  protected String userPrompt(Problem problem) {
    return problem.question();
  }

  @Override
  protected List<ToolSchema> tools(HarnessContext ctx) {
    return List.of(); // the harness calls the tool; the model only answers
  }

  @Override
  public HarnessResult solve(Problem problem, HarnessContext ctx) {
    String[] sentences = ctx.tool("sentences", problem.question()).split("\n");
    List<Message> messages = new ArrayList<>();
    if (sentences.length < 3) {
      messages.add(Message.user(problem.question()));
      return HarnessResult.of(number(ctx.chat(messages, ChatOptions.of(6)).content()));
    }
    String state = sentences[0];
    String question = sentences[sentences.length - 1];
    String value = "";
    for (int i = 1; i < sentences.length - 1; i++) {
      messages.add(Message.user(state + " " + sentences[i] + " " + question));
      AssistantTurn reply = ctx.chat(messages, ChatOptions.of(6));
      messages.add(reply.message());
      value = number(reply.content());
      if (value.isEmpty()) {
        return HarnessResult.of("");
      }
      state = replaceFirstNumber(state, value);
    }
    return HarnessResult.of(value);
  }

  /** The first integer of the reply, or "". */
  static String number(String reply) {
    int i = 0;
    while (i < reply.length() && !Character.isDigit(reply.charAt(i))) {
      i++;
    }
    int j = i;
    while (j < reply.length() && Character.isDigit(reply.charAt(j))) {
      j++;
    }
    return reply.substring(i, j);
  }

  /** The sentence with its first number replaced by {@code value} (text rewriting only). */
  static String replaceFirstNumber(String sentence, String value) {
    int i = 0;
    while (i < sentence.length() && !Character.isDigit(sentence.charAt(i))) {
      i++;
    }
    if (i == sentence.length()) {
      return sentence;
    }
    int j = i;
    while (j < sentence.length() && Character.isDigit(sentence.charAt(j))) {
      j++;
    }
    return sentence.substring(0, i) + value + sentence.substring(j);
  }
}
