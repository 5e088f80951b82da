package whale.harness;

/**
 * The package and the first public class of a harness source, found by one linear pass of a small
 * lexer that skips comments, string and char literals and text blocks. (A backtracking regex over the
 * source overflowed the stack on string literals of about 1,800 characters.)
 *
 * @param packageName the declared package, or "" for the default package
 * @param packageLine the line of the package declaration (0 when there is none)
 * @param publicClass the simple name of the first {@code public [final|abstract|strictfp]* class},
 *     or null when there is none
 */
record SourceHeader(String packageName, long packageLine, String publicClass) {

  static SourceHeader scan(String src) {
    Lexer lx = new Lexer(src);
    String pkg = "";
    long pkgLine = 0;
    String cls = null;
    boolean afterPublic = false;
    for (String tok = lx.next(); tok != null; tok = lx.next()) {
      if (tok.equals("package") && pkgLine == 0) {
        pkgLine = lx.line;
        StringBuilder name = new StringBuilder();
        for (String t = lx.next(); t != null && !t.equals(";"); t = lx.next()) {
          name.append(t);
        }
        pkg = name.toString();
      } else if (tok.equals("public")) {
        afterPublic = true;
      } else if (afterPublic && (tok.equals("final") || tok.equals("abstract") || tok.equals("strictfp"))) {
        continue; // modifiers between public and class
      } else if (afterPublic && tok.equals("class")) {
        String name = lx.next();
        if (name != null && Lexer.isIdentifier(name)) {
          cls = name;
          break;
        }
        afterPublic = false;
      } else {
        afterPublic = false;
      }
    }
    return new SourceHeader(pkg, pkgLine, cls);
  }

  /** Tokens: identifiers and keywords, and single punctuation characters; literals and comments skipped. */
  static final class Lexer {
    private final String s;
    private int i;
    long line = 1;

    Lexer(String s) {
      this.s = s;
    }

    static boolean isIdentifier(String t) {
      return !t.isEmpty() && Character.isJavaIdentifierStart(t.charAt(0));
    }

    /** The next token, or null at the end. Every character is looked at a bounded number of times. */
    String next() {
      int n = s.length();
      while (i < n) {
        char c = s.charAt(i);
        if (c == '\n') {
          line++;
          i++;
        } else if (Character.isWhitespace(c)) {
          i++;
        } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
          while (i < n && s.charAt(i) != '\n') {
            i++;
          }
        } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
          i += 2;
          while (i < n && !(s.charAt(i) == '*' && i + 1 < n && s.charAt(i + 1) == '/')) {
            if (s.charAt(i) == '\n') {
              line++;
            }
            i++;
          }
          i = Math.min(n, i + 2);
        } else if (c == '"' && s.startsWith("\"\"\"", i)) {
          i += 3;
          while (i < n && !s.startsWith("\"\"\"", i)) {
            if (s.charAt(i) == '\\') {
              i++;
            } else if (s.charAt(i) == '\n') {
              line++;
            }
            i++;
          }
          i = Math.min(n, i + 3);
        } else if (c == '"' || c == '\'') {
          i++;
          while (i < n && s.charAt(i) != c && s.charAt(i) != '\n') {
            i += s.charAt(i) == '\\' ? 2 : 1;
          }
          i = Math.min(n, i + 1);
        } else if (Character.isJavaIdentifierStart(c)) {
          int start = i;
          while (i < n && Character.isJavaIdentifierPart(s.charAt(i))) {
            i++;
          }
          return s.substring(start, i);
        } else {
          i++;
          return String.valueOf(c);
        }
      }
      return null;
    }
  }
}
