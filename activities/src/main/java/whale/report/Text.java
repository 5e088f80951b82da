package whale.report;

import java.util.Locale;

/** Escaping and number formats shared by the Markdown, HTML and SVG output (Locale.ROOT always). */
final class Text {
  private Text() {}

  /** For HTML and SVG text and attribute values. */
  static String html(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(Character.isISOControl(c) ? ' ' : c);
      }
    }
    return b.toString();
  }

  /** For a Markdown table cell: no line breaks, no column breaks, no inline markup or HTML. */
  static String markdown(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isISOControl(c)) {
        b.append(' ');
      } else {
        if ("\\`*_[]<>|#".indexOf(c) >= 0) {
          b.append('\\');
        }
        b.append(c);
      }
    }
    return b.toString();
  }

  /** A fraction as a percentage with two decimals, as the paper reports mean@8. */
  static String pct(double fraction) {
    return String.format(Locale.ROOT, "%.2f", 100 * fraction);
  }

  /** A mean and its 95 % interval in percent, "mean [lo, hi]"; "mean [—]" for one seed. */
  static String interval(Interval i) {
    return pct(i.mean()) + (i.defined() ? " [" + pct(i.lo()) + ", " + pct(i.hi()) + "]" : " [—]");
  }

  static String count(double v) {
    return Long.toString(Math.round(v));
  }

  /** Shortens a legend entry that would run off the plot; the full name is in the table. */
  static String shorten(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }
}
