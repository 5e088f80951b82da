package whale.task.math;

import java.util.List;
import whale.harness.HarnessForm;
import whale.harness.Genome;
import whale.harness.GenomeSpace;

/**
 * The building blocks of a math template harness, embedded in the emitted source as
 * {@code // WHALE-GENOME: format=QA;decomp=CHAIN;votes=3;retries=1;parse=FIRST_INT;maxNew=8} and a
 * {@code GENOME} constant.
 */
public record MathGenome(PromptFormat format, Decomposition decomposition, int votes, int retries,
    AnswerParsing parsing, int maxNewTokens, HarnessForm form) implements Genome<MathGenome, MathGenome.Axis> {

  /** FORMAT is the only prompt-text axis (the Fast-Slow control's). */
  public static final GenomeSpace<MathGenome, Axis> SPACE = GenomeSpace.<MathGenome, Axis>of(Axis.class)
      .axis(Axis.FORMAT, "format", MathGenome::format, List.of(PromptFormat.values()))
      .axis(Axis.DECOMPOSITION, "decomp", MathGenome::decomposition, List.of(Decomposition.values()))
      .axis(Axis.VOTES, "votes", MathGenome::votes, List.of(1, 3, 5))
      .axis(Axis.RETRIES, "retries", MathGenome::retries, List.of(0, 1, 2))
      .axis(Axis.PARSING, "parse", MathGenome::parsing, List.of(AnswerParsing.values()))
      .axis(Axis.MAX_NEW_TOKENS, "maxNew", MathGenome::maxNewTokens, List.of(4, 8, 16))
      .axis(Axis.FORM, "form", MathGenome::form, List.of(HarnessForm.values()), HarnessForm.COMPLETION)
      .build(v -> new MathGenome((PromptFormat) v.get(0), (Decomposition) v.get(1), (Integer) v.get(2),
          (Integer) v.get(3), (AnswerParsing) v.get(4), (Integer) v.get(5), (HarnessForm) v.get(6)),
          MathTemplates::render);

  /** The genome of the six axes before FORM existed: the completion form. */
  public MathGenome(PromptFormat format, Decomposition decomposition, int votes, int retries,
      AnswerParsing parsing, int maxNewTokens) {
    this(format, decomposition, votes, retries, parsing, maxNewTokens, HarnessForm.COMPLETION);
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
  public static MathGenome initial() {
    // The format the base model was pretrained on, asked once: the natural starting point.
    return new MathGenome(PromptFormat.QA, Decomposition.DIRECT, 1, 0,
        AnswerParsing.FIRST_INT, 16);
  }

  @Override
  public GenomeSpace<MathGenome, Axis> space() {
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
