package whale.harness;

import java.util.List;

/**
 * The building blocks of a math template harness, embedded in the emitted source as
 * {@code // WHALE-GENOME: format=QA;decomp=CHAIN;votes=3;retries=1;parse=FIRST_INT;maxNew=8} and a
 * {@code GENOME} constant.
 */
public record HarnessGenome(PromptFormat format, Decomposition decomposition, int votes, int retries,
    AnswerParsing parsing, int maxNewTokens, Form form) implements Genome<HarnessGenome, HarnessGenome.Axis> {

  /** FORMAT is the only prompt-text axis (the Fast-Slow control's). */
  public static final GenomeSpace<HarnessGenome, Axis> SPACE = GenomeSpace.<HarnessGenome, Axis>of(Axis.class)
      .axis(Axis.FORMAT, "format", HarnessGenome::format, List.of(PromptFormat.values()))
      .axis(Axis.DECOMPOSITION, "decomp", HarnessGenome::decomposition, List.of(Decomposition.values()))
      .axis(Axis.VOTES, "votes", HarnessGenome::votes, List.of(1, 3, 5))
      .axis(Axis.RETRIES, "retries", HarnessGenome::retries, List.of(0, 1, 2))
      .axis(Axis.PARSING, "parse", HarnessGenome::parsing, List.of(AnswerParsing.values()))
      .axis(Axis.MAX_NEW_TOKENS, "maxNew", HarnessGenome::maxNewTokens, List.of(4, 8, 16))
      .axis(Axis.FORM, "form", HarnessGenome::form, List.of(Form.values()), Form.COMPLETION)
      .build(v -> new HarnessGenome((PromptFormat) v.get(0), (Decomposition) v.get(1), (Integer) v.get(2),
          (Integer) v.get(3), (AnswerParsing) v.get(4), (Integer) v.get(5), (Form) v.get(6)),
          TemplateProposer::render);

  /** The genome of the six axes before FORM existed: the completion form. */
  public HarnessGenome(PromptFormat format, Decomposition decomposition, int votes, int retries,
      AnswerParsing parsing, int maxNewTokens) {
    this(format, decomposition, votes, retries, parsing, maxNewTokens, Form.COMPLETION);
  }

  /**
   * How each question reaches the model: COMPLETION prompts {@code generate} with the format's
   * prefix and suffix; CHAT sends the question as the user's message through the model's own chat
   * template ({@code chat}), the form instruction-tuned models expect (FORMAT does not apply); TOOLS
   * is CHAT with the task's tools offered: a tool the model calls runs, its result goes back as a
   * tool message and the model answers ({@link ChatHarness#converse}, two turns per question).
   */
  public enum Form {
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

  /** How the question is put to the model. QA is the pretraining corpus's format. */
  public enum PromptFormat {
    QA("Q: ", "\\nA:"),
    QUESTION_ANSWER("Question: ", "\\nAnswer:"),
    THE_ANSWER_IS("", "\\nThe answer is");

    /** Java string-literal text (escaped) before and after the question. */
    public final String prefixLiteral;
    public final String suffixLiteral;

    PromptFormat(String prefixLiteral, String suffixLiteral) {
      this.prefixLiteral = prefixLiteral;
      this.suffixLiteral = suffixLiteral;
    }
  }

  /**
   * DIRECT asks the whole question; CHAIN (least-to-most) rewrites it into a chain of one-step
   * questions, putting the model's previous answer into the first sentence of the next one.
   */
  public enum Decomposition { DIRECT, CHAIN }

  /** Which part of the completion is the answer. */
  public enum AnswerParsing { FIRST_INT, LAST_INT, WHOLE_LINE }

  /** The axes a mutation changes. */
  public enum Axis { FORMAT, DECOMPOSITION, VOTES, RETRIES, PARSING, MAX_NEW_TOKENS, FORM }

  /** h0: "Question:/Answer:" format, direct, one sample, no retries, first integer, 16 new tokens. */
  public static HarnessGenome initial() {
    // The format the base model was pretrained on, asked once: the natural starting point.
    return new HarnessGenome(PromptFormat.QA, Decomposition.DIRECT, 1, 0,
        AnswerParsing.FIRST_INT, 16);
  }

  @Override
  public GenomeSpace<HarnessGenome, Axis> space() {
    return SPACE;
  }

  /** Short readable code, e.g. "qa-chain-v3-r1-first-t8". */
  @Override
  public String code() {
    String f = switch (format) {
      case QA -> "qa";
      case QUESTION_ANSWER -> "question";
      case THE_ANSWER_IS -> "answeris";
    };
    String p = switch (parsing) {
      case FIRST_INT -> "first";
      case LAST_INT -> "last";
      case WHOLE_LINE -> "line";
    };
    return f + "-" + decomposition.name().toLowerCase() + "-v" + votes + "-r" + retries + "-" + p + "-t"
        + maxNewTokens + form.codeSuffix();
  }

  public String className() {
    return "H_" + code().replace('-', '_');
  }
}
