package whale.task.searchqa;

import java.text.Normalizer;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * SQuAD-style normalized exact match: lower case, punctuation removed, the articles a/an/the
 * dropped, whitespace collapsed; a prediction is right when it equals any gold answer so normalized.
 */
public final class AnswerMatch {
  private static final Pattern PUNCT = Pattern.compile("[\\p{Punct}\\p{IsPunctuation}]");
  private static final Pattern ARTICLES = Pattern.compile("\\b(a|an|the)\\b");
  private static final Pattern SPACES = Pattern.compile("\\s+");
  private static final Pattern MARKS = Pattern.compile("\\p{M}+");

  private AnswerMatch() {}

  public static String normalize(String s) {
    if (s == null) {
      return "";
    }
    // accents are dropped too, so "Mexico" matches "México" (many datasets mix the two)
    String t = MARKS.matcher(Normalizer.normalize(s, Normalizer.Form.NFD)).replaceAll("");
    t = t.toLowerCase(Locale.ROOT);
    t = PUNCT.matcher(t).replaceAll("");
    t = ARTICLES.matcher(t).replaceAll(" ");
    return SPACES.matcher(t).replaceAll(" ").trim();
  }

  /** True when the prediction, normalized, is non-empty and equals one of the gold answers. */
  public static boolean matches(String prediction, List<String> golds) {
    String p = normalize(prediction);
    if (p.isEmpty()) {
      return false;
    }
    for (String g : golds) {
      if (p.equals(normalize(g))) {
        return true;
      }
    }
    return false;
  }
}
