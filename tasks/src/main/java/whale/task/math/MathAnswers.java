package whale.task.math;

import java.math.BigDecimal;
import java.util.regex.Pattern;

/**
 * Reference-answer extraction and comparison for the math dataset formats: GSM8K's {@code #### N}
 * with an exact numeric match (thousands separators tolerated), and MATH's {@code \boxed{...}} with
 * a strict extraction (nested braces handled) and light normalisation.
 */
public final class MathAnswers {
  private static final Pattern NUMBER = Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)");
  private static final Pattern GROUPED = Pattern.compile("[+-]?\\d{1,3}(,\\d{3})+(\\.\\d*)?");

  private MathAnswers() {}

  /** The number a text is ("1,234", "-5", "3.50"), or null when it is anything else. */
  public static BigDecimal parseNumber(String text) {
    if (text == null) {
      return null;
    }
    String t = text.trim();
    if (GROUPED.matcher(t).matches()) {
      t = t.replace(",", "");
    }
    if (!NUMBER.matcher(t).matches()) {
      return null;
    }
    return new BigDecimal(t.startsWith("+") ? t.substring(1) : t);
  }

  /** GSM8K: the text after the last "####" of a solution, trimmed, or null when there is none. */
  public static String gsm8kFinal(String solution) {
    int i = solution.lastIndexOf("####");
    if (i < 0) {
      return null;
    }
    String a = solution.substring(i + 4).trim();
    return a.isEmpty() ? null : a;
  }

  /** Exact numeric match: both are numbers and equal in value ("1,000" = "1000" = "1000.0"). */
  public static boolean numericMatch(String answer, String reference) {
    BigDecimal a = parseNumber(answer);
    BigDecimal r = parseNumber(reference);
    return a != null && r != null && a.compareTo(r) == 0;
  }

  /**
   * The content of the last {@code \boxed{...}} in the text (braces balanced), or null when there is
   * none or its braces do not close.
   */
  public static String lastBoxed(String text) {
    if (text == null) {
      return null;
    }
    int at = text.lastIndexOf("\\boxed{");
    if (at < 0) {
      return null;
    }
    int start = at + "\\boxed{".length();
    int depth = 1;
    for (int i = start; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\\' && i + 1 < text.length()) {
        i++; // an escaped brace such as \{ does not count
      } else if (c == '{') {
        depth++;
      } else if (c == '}' && --depth == 0) {
        return text.substring(start, i);
      }
    }
    return null;
  }

  /**
   * Light normalisation of a LaTeX answer: no whitespace, no {@code $}, no {@code \left}/{@code \right},
   * no thin spaces ({@code \, \; \: \!}), {@code \dfrac}/{@code \tfrac} as {@code \frac}, no
   * {@code ^\circ} or {@code \%}, no final period, and a lone {@code \text{...}} unwrapped.
   */
  public static String normalizeLatex(String s) {
    String t = s.replaceAll("\\s+", "");
    t = t.replace("$", "").replace("\\left", "").replace("\\right", "");
    t = t.replace("\\,", "").replace("\\;", "").replace("\\:", "").replace("\\!", "");
    t = t.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac");
    t = t.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\%", "");
    if (t.startsWith("\\text{") && t.endsWith("}") && t.indexOf('}') == t.length() - 1) {
      t = t.substring("\\text{".length(), t.length() - 1);
    }
    while (t.endsWith(".")) {
      t = t.substring(0, t.length() - 1);
    }
    return t;
  }

  /** MATH: the answer's last {@code \boxed{}} equals the reference after normalisation. */
  public static boolean boxedMatch(String answer, String reference) {
    String got = lastBoxed(answer);
    if (got == null || reference == null) {
      return false;
    }
    String a = normalizeLatex(got);
    String r = normalizeLatex(reference);
    return !a.isEmpty() && (a.equals(r) || numericMatch(a, r));
  }
}
