import java.util.ArrayList;
import java.util.List;
import whale.chat.ToolSchema;
import whale.harness.ChatHarness;
import whale.harness.HarnessContext;
import whale.harness.HarnessResult;
import whale.task.Problem;

/**
 * A tool-using chat agent for the math task, least-to-most. The task's "sentences" tool splits the
 * problem; each step becomes a one-step question with the running value folded in, which the model
 * answers in a conversation of its own: it calls the task's "calc" tool, sees the result and
 * answers. RSFT trains on each conversation, the model's turns only (its call and its answer).
 */
public class MathCalc extends ChatHarness {
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
    List<ToolSchema> calc = new ArrayList<>();
    for (ToolSchema t : ctx.tools()) {
      if (t.name().equals("calc")) {
        calc.add(t);
      }
    }
    return calc;
  }

  @Override
  protected int maxTurns() {
    return 2; // the call, then the answer
  }

  @Override
  protected int maxNewTokens() {
    return 80; // a one-line tool call is about 70 characters
  }

  @Override
  protected String answer(String reply) {
    return number(reply);
  }

  @Override
  public HarnessResult solve(Problem problem, HarnessContext ctx) {
    String[] sentences = ctx.tool("sentences", problem.question()).split("\n");
    if (sentences.length < 3) {
      return super.solve(problem, ctx);
    }
    String state = sentences[0];
    String question = sentences[sentences.length - 1];
    String value = "";
    for (int i = 1; i < sentences.length - 1; i++) {
      String step = state + " " + sentences[i] + " " + question;
      value = super.solve(new Problem(problem.id(), step), ctx).answer();
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
