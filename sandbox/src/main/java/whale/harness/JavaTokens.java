package whale.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * A small Java lexer for checks that must not depend on javac or on backtracking regexes: one linear
 * pass, comments and whitespace dropped, string literals and text blocks as one token each.
 */
final class JavaTokens {
  private JavaTokens() {}

  enum Kind { WORD, STRING, CHAR, NUMBER, SYMBOL }

  /** One token; {@code text} is the source text (for STRING the whole literal, quotes included). */
  record Token(String text, int line, Kind kind) {}

  static List<Token> tokens(String src) {
    List<Token> out = new ArrayList<>();
    int line = 1;
    int n = src.length();
    for (int i = 0; i < n; ) {
      char c = src.charAt(i);
      if (c == '\n') {
        line++;
        i++;
      } else if (Character.isWhitespace(c)) {
        i++;
      } else if (src.startsWith("//", i)) {
        while (i < n && src.charAt(i) != '\n') {
          i++;
        }
      } else if (src.startsWith("/*", i)) {
        int end = src.indexOf("*/", i + 2);
        end = end < 0 ? n : end + 2;
        line += count(src, i, end);
        i = end;
      } else if (src.startsWith("\"\"\"", i)) {
        int end = src.indexOf("\"\"\"", i + 3);
        end = end < 0 ? n : end + 3;
        out.add(new Token(src.substring(i, end), line, Kind.STRING));
        line += count(src, i, end);
        i = end;
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < n && src.charAt(j) != c && src.charAt(j) != '\n') {
          j += src.charAt(j) == '\\' ? 2 : 1;
        }
        j = Math.min(n, j + 1);
        out.add(new Token(src.substring(i, j), line, c == '"' ? Kind.STRING : Kind.CHAR));
        i = j;
      } else if (Character.isJavaIdentifierStart(c)) {
        int j = i;
        while (j < n && Character.isJavaIdentifierPart(src.charAt(j))) {
          j++;
        }
        out.add(new Token(src.substring(i, j), line, Kind.WORD));
        i = j;
      } else if (Character.isDigit(c)) {
        int j = i;
        while (j < n && (Character.isLetterOrDigit(src.charAt(j)) || src.charAt(j) == '.'
            || src.charAt(j) == '_')) {
          j++;
        }
        out.add(new Token(src.substring(i, j), line, Kind.NUMBER));
        i = j;
      } else {
        out.add(new Token(String.valueOf(c), line, Kind.SYMBOL));
        i++;
      }
    }
    return out;
  }

  private static int count(String s, int from, int to) {
    int k = 0;
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == '\n') {
        k++;
      }
    }
    return k;
  }
}
