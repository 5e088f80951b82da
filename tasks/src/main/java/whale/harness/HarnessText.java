package whale.harness;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fills the {@code {{name}}} slots of a template harness's text (a Java text block in a task's
 * renderer). The substitution is deliberately small: each slot is replaced by its value as written,
 * in one pass (a value is never scanned for slots), and a slot without a value, or a value without a
 * slot, is an error rather than a silently wrong harness.
 */
public final class HarnessText {
  private static final Pattern SLOT = Pattern.compile("\\{\\{([A-Za-z][A-Za-z0-9]*)}}");

  private HarnessText() {}

  /**
   * {@code text} with every {@code {{name}}} replaced by its value.
   *
   * @param namesAndValues name, value, name, value, ...; each value is written with {@code String.valueOf}
   */
  public static String fill(String text, Object... namesAndValues) {
    if (namesAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("names and values do not pair up");
    }
    Map<String, String> values = new HashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      values.put((String) namesAndValues[i], String.valueOf(namesAndValues[i + 1]));
    }
    Set<String> used = new HashSet<>();
    Matcher m = SLOT.matcher(text);
    StringBuilder out = new StringBuilder(text.length() + 64);
    while (m.find()) {
      String value = values.get(m.group(1));
      if (value == null) {
        throw new IllegalArgumentException("no value for {{" + m.group(1) + "}}");
      }
      used.add(m.group(1));
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    if (!used.containsAll(values.keySet())) {
      Set<String> unused = new HashSet<>(values.keySet());
      unused.removeAll(used);
      throw new IllegalArgumentException("no slot for " + unused);
    }
    return out.toString();
  }
}
