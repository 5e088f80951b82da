package whale.harness;

import java.util.List;

/**
 * The package and the first public class of a harness source, found with {@link JavaTokens} in linear
 * time. (A backtracking regex over the source overflowed the stack on string literals of about 1,800
 * characters.)
 *
 * @param packageName the declared package, or "" for the default package
 * @param packageLine the line of the package declaration (0 when there is none)
 * @param publicClass the simple name of the first {@code public [final|abstract|strictfp]* class},
 *     or null when there is none
 */
record SourceHeader(String packageName, long packageLine, String publicClass) {

  static SourceHeader scan(String src) {
    List<JavaTokens.Token> toks = JavaTokens.tokens(src);
    String pkg = "";
    long pkgLine = 0;
    boolean afterPublic = false;
    for (int i = 0; i < toks.size(); i++) {
      JavaTokens.Token t = toks.get(i);
      boolean word = t.kind() == JavaTokens.Kind.WORD;
      if (word && t.text().equals("package") && pkgLine == 0) {
        pkgLine = t.line();
        StringBuilder name = new StringBuilder();
        while (i + 1 < toks.size() && !toks.get(i + 1).text().equals(";")) {
          name.append(toks.get(++i).text());
        }
        pkg = name.toString();
      } else if (word && t.text().equals("public")) {
        afterPublic = true;
      } else if (afterPublic && word && List.of("final", "abstract", "strictfp").contains(t.text())) {
        continue; // modifiers between public and class
      } else if (afterPublic && word && t.text().equals("class") && i + 1 < toks.size()
          && toks.get(i + 1).kind() == JavaTokens.Kind.WORD) {
        return new SourceHeader(pkg, pkgLine, toks.get(i + 1).text());
      } else {
        afterPublic = false;
      }
    }
    return new SourceHeader(pkg, pkgLine, null);
  }
}
