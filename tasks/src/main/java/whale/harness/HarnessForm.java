package whale.harness;

import java.util.List;

/**
 * How each question reaches the model: COMPLETION prompts {@code generate} with the format's
 * prefix and suffix; CHAT sends the question as the user's message through the model's own chat
 * template ({@code chat}), the form instruction-tuned models expect (FORMAT does not apply); TOOLS
 * is CHAT with the task's tools offered: a tool the model calls runs, its result goes back as a
 * tool message and the model answers ({@link ChatHarness#converse}, two turns per question).
 */
public enum HarnessForm {
  COMPLETION, CHAT, TOOLS;

  /** Room for one tool call in the TOOLS form: a Hermes call line is about 70 tokens. */
  public static final int TOOL_CALL_TOKENS = 80;
  /**
   * A chat turn's token limit per token of the genome's MAX_NEW_TOKENS: an instruction-tuned model
   * writes a sentence or a short derivation before its answer (SmolLM2-135M-Instruct cut at 16
   * tokens had rarely reached a number of its own).
   */
  public static final int CHAT_TOKENS_PER_ANSWER_TOKEN = 4;

  /** The Java expression of one model call on {@code prompt} in this form (any task's renderer). */
  public String call() {
    return switch (this) {
      case COMPLETION -> "ctx.generate(prompt, MAX_NEW_TOKENS)";
      case CHAT -> "ctx.chat(List.of(Message.user(prompt)), ChatOptions.of("
          + CHAT_TOKENS_PER_ANSWER_TOKEN + " * MAX_NEW_TOKENS)).content()";
      case TOOLS -> "ChatHarness.converse(ctx, \"\", prompt,\n        ChatOptions.of(Math.max("
          + CHAT_TOKENS_PER_ANSWER_TOKEN + " * MAX_NEW_TOKENS, " + TOOL_CALL_TOKENS
          + ")).withTools(ctx.tools()), 2)";
    };
  }

  /** The imports {@link #call()} needs. */
  public List<String> imports() {
    return switch (this) {
      case COMPLETION -> List.of();
      case CHAT -> List.of("java.util.List", "whale.chat.ChatOptions", "whale.chat.Message");
      case TOOLS -> List.of("whale.chat.ChatOptions", "whale.harness.ChatHarness");
    };
  }

  /** Why a search would try this form (a proposal's default hypothesis). */
  public String reason() {
    return switch (this) {
      case COMPLETION -> "a plain completion prompt suits a model pretrained on the task's format";
      case CHAT -> "asking through the model's own chat template suits an instruction-tuned model";
      case TOOLS -> "offering the task's tools through the chat template lets the model hand a step"
          + " to a tool and answer from its result";
    };
  }

  /** The suffix of a genome's short code ("-chat"). */
  public String codeSuffix() {
    return this == COMPLETION ? "" : "-" + name().toLowerCase();
  }
}
