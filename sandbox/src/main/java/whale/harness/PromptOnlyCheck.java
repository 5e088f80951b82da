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
    boolean nameNext = false;
    for (JavaTokens.Token t : JavaTokens.tokens(src)) {
      switch (t.kind()) {
        // string literals are prompt text; char literals are code ('\n' as a separator is logic)
        case STRING -> out.add(new Token("\"…\"", t.line()));
        case WORD -> {
          out.add(new Token(nameNext ? "<class name>" : t.text(), t.line()));
          nameNext = t.text().equals("class") && !nameNext;
        }
        default -> out.add(new Token(t.text(), t.line()));
      }
    }
    return out;
  }
}
