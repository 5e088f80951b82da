package whale.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * The Fast-Slow control's validator: a candidate may differ from the incoming harness only in prompt
 * text. Both sources are read as Java tokens with comments and whitespace dropped, every string
 * literal (and text block) reduced to a placeholder and the class's own name ignored; any other
 * difference is reported with the candidate's line.
 */
public final class PromptOnlyCheck {
  private PromptOnlyCheck() {}

  private record Token(String text, int line) {}

  /** Null when {@code candidate} changes only string literals of {@code incoming}; else why not. */
  public static String problem(String incoming, String candidate) {
    List<Token> a = tokens(incoming);
    List<Token> b = tokens(candidate);
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      if (!a.get(i).text().equals(b.get(i).text())) {
        return "prompt-only search (fst): line " + b.get(i).line() + " changes code, not prompt text: '"
            + b.get(i).text() + "' where the incoming harness has '" + a.get(i).text()
            + "' (only string literals may differ)";
      }
    }
    if (a.size() != b.size()) {
      int line = b.size() > n ? b.get(n).line() : b.isEmpty() ? 1 : b.get(b.size() - 1).line();
      return "prompt-only search (fst): line " + line + (b.size() > n ? " adds code" : " removes code")
          + " (only string literals may differ from the incoming harness)";
    }
    return null;
  }

  private static List<Token> tokens(String src) {
    List<Token> out = new ArrayList<>();
    int line = 1;
    boolean nameNext = false;
    for (int i = 0; i < src.length(); ) {
      char c = src.charAt(i);
      if (c == '\n') {
        line++;
        i++;
      } else if (Character.isWhitespace(c)) {
        i++;
      } else if (src.startsWith("//", i)) {
        while (i < src.length() && src.charAt(i) != '\n') {
          i++;
        }
      } else if (src.startsWith("/*", i)) {
        int end = src.indexOf("*/", i + 2);
        end = end < 0 ? src.length() : end + 2;
        line += count(src, i, end);
        i = end;
      } else if (src.startsWith("\"\"\"", i)) {
        int end = src.indexOf("\"\"\"", i + 3);
        end = end < 0 ? src.length() : end + 3;
        out.add(new Token("\"…\"", line));
        line += count(src, i, end);
        i = end;
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < src.length() && src.charAt(j) != c && src.charAt(j) != '\n') {
          j += src.charAt(j) == '\\' ? 2 : 1;
        }
        j = Math.min(src.length(), j + 1);
        // Char literals are code ('\n' as a separator is logic); string literals are prompt text.
        out.add(new Token(c == '"' ? "\"…\"" : src.substring(i, j), line));
        i = j;
      } else if (Character.isJavaIdentifierStart(c)) {
        int j = i;
        while (j < src.length() && Character.isJavaIdentifierPart(src.charAt(j))) {
          j++;
        }
        String word = src.substring(i, j);
        out.add(new Token(nameNext ? "<class name>" : word, line));
        nameNext = word.equals("class") && !nameNext;
        i = j;
      } else if (Character.isDigit(c)) {
        int j = i;
        while (j < src.length() && (Character.isLetterOrDigit(src.charAt(j)) || src.charAt(j) == '.'
            || src.charAt(j) == '_')) {
          j++;
        }
        out.add(new Token(src.substring(i, j), line));
        i = j;
      } else {
        out.add(new Token(String.valueOf(c), line));
        i++;
      }
    }
    return out;
  }

  private static int count(String s, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == '\n') {
        n++;
      }
    }
    return n;
  }
}
