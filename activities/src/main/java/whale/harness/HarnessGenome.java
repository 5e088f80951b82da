package whale.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The building blocks of a template harness. Encoded as
 * {@code format=QA;decomp=CHAIN;votes=3;retries=1;parse=FIRST_INT;maxNew=8} and embedded in the
 * emitted source as a {@code // WHALE-GENOME: ...} comment and a {@code GENOME} constant.
 */
public record HarnessGenome(PromptFormat format, Decomposition decomposition, int votes, int retries,
    AnswerParsing parsing, int maxNewTokens) {

  public static final List<Integer> VOTE_VALUES = List.of(1, 3, 5);
  public static final List<Integer> RETRY_VALUES = List.of(0, 1, 2);
  public static final List<Integer> MAX_NEW_TOKEN_VALUES = List.of(4, 8, 16);
  public static final String MARKER = "WHALE-GENOME:";
  private static final Pattern IN_SOURCE = Pattern.compile(Pattern.quote(MARKER) + "\\s*(\\S+)");

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
  public enum Axis { FORMAT, DECOMPOSITION, VOTES, RETRIES, PARSING, MAX_NEW_TOKENS }

  public HarnessGenome {
    if (!VOTE_VALUES.contains(votes) || !RETRY_VALUES.contains(retries)
        || !MAX_NEW_TOKEN_VALUES.contains(maxNewTokens)) {
      throw new IllegalArgumentException("genome out of range: votes " + votes + ", retries " + retries
          + ", maxNew " + maxNewTokens);
    }
  }

  /** h0: "Question:/Answer:" format, direct, one sample, no retries, first integer, 16 new tokens. */
  public static HarnessGenome initial() {
    // The format the base model was pretrained on, asked once: the natural starting point.
    return new HarnessGenome(PromptFormat.QA, Decomposition.DIRECT, 1, 0,
        AnswerParsing.FIRST_INT, 16);
  }

  public String encode() {
    return "format=" + format + ";decomp=" + decomposition + ";votes=" + votes + ";retries=" + retries
        + ";parse=" + parsing + ";maxNew=" + maxNewTokens;
  }

  public static HarnessGenome parse(String encoded) {
    PromptFormat f = null;
    Decomposition d = null;
    AnswerParsing p = null;
    int v = -1;
    int r = -1;
    int t = -1;
    for (String kv : encoded.trim().split(";")) {
      String[] x = kv.split("=", 2);
      if (x.length != 2) {
        throw new IllegalArgumentException("bad genome " + encoded);
      }
      switch (x[0]) {
        case "format" -> f = PromptFormat.valueOf(x[1]);
        case "decomp" -> d = Decomposition.valueOf(x[1]);
        case "votes" -> v = Integer.parseInt(x[1]);
        case "retries" -> r = Integer.parseInt(x[1]);
        case "parse" -> p = AnswerParsing.valueOf(x[1]);
        case "maxNew" -> t = Integer.parseInt(x[1]);
        default -> throw new IllegalArgumentException("unknown genome key " + x[0]);
      }
    }
    if (f == null || d == null || p == null) {
      throw new IllegalArgumentException("incomplete genome " + encoded);
    }
    return new HarnessGenome(f, d, v, r, p, t);
  }

  /** The genome embedded in a source, or null when there is none (or it does not parse). */
  public static HarnessGenome fromSource(String source) {
    if (source == null) {
      return null;
    }
    Matcher m = IN_SOURCE.matcher(source);
    if (!m.find()) {
      return null;
    }
    try {
      return parse(m.group(1));
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Short readable code, e.g. "qa-chain-v3-r1-first-t8". */
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
        + maxNewTokens;
  }

  public String className() {
    return "H_" + code().replace('-', '_');
  }

  /** The value on one axis, as text. */
  public String value(Axis axis) {
    return switch (axis) {
      case FORMAT -> format.name();
      case DECOMPOSITION -> decomposition.name();
      case VOTES -> Integer.toString(votes);
      case RETRIES -> Integer.toString(retries);
      case PARSING -> parsing.name();
      case MAX_NEW_TOKENS -> Integer.toString(maxNewTokens);
    };
  }

  /** Every genome that differs from this one on {@code axis} only. */
  public List<HarnessGenome> neighbours(Axis axis) {
    List<HarnessGenome> out = new ArrayList<>();
    switch (axis) {
      case FORMAT -> {
        for (PromptFormat x : PromptFormat.values()) {
          if (x != format) {
            out.add(new HarnessGenome(x, decomposition, votes, retries, parsing, maxNewTokens));
          }
        }
      }
      case DECOMPOSITION -> {
        for (Decomposition x : Decomposition.values()) {
          if (x != decomposition) {
            out.add(new HarnessGenome(format, x, votes, retries, parsing, maxNewTokens));
          }
        }
      }
      case VOTES -> {
        for (int x : VOTE_VALUES) {
          if (x != votes) {
            out.add(new HarnessGenome(format, decomposition, x, retries, parsing, maxNewTokens));
          }
        }
      }
      case RETRIES -> {
        for (int x : RETRY_VALUES) {
          if (x != retries) {
            out.add(new HarnessGenome(format, decomposition, votes, x, parsing, maxNewTokens));
          }
        }
      }
      case PARSING -> {
        for (AnswerParsing x : AnswerParsing.values()) {
          if (x != parsing) {
            out.add(new HarnessGenome(format, decomposition, votes, retries, x, maxNewTokens));
          }
        }
      }
      case MAX_NEW_TOKENS -> {
        for (int x : MAX_NEW_TOKEN_VALUES) {
          if (x != maxNewTokens) {
            out.add(new HarnessGenome(format, decomposition, votes, retries, parsing, x));
          }
        }
      }
      default -> throw new IllegalStateException();
    }
    return out;
  }

  /** All genomes, in a fixed order. */
  public static List<HarnessGenome> all() {
    List<HarnessGenome> out = new ArrayList<>();
    for (PromptFormat f : PromptFormat.values()) {
      for (Decomposition d : Decomposition.values()) {
        for (int v : VOTE_VALUES) {
          for (int r : RETRY_VALUES) {
            for (AnswerParsing p : AnswerParsing.values()) {
              for (int t : MAX_NEW_TOKEN_VALUES) {
                out.add(new HarnessGenome(f, d, v, r, p, t));
              }
            }
          }
        }
      }
    }
    return out;
  }
}
