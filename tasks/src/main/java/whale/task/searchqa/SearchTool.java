package whale.task.searchqa;

import java.util.ArrayList;
import java.util.List;
import whale.task.Tool;

/**
 * The {@code search} tool: the input is a free-text query, the output the {@value #RESULTS} best
 * documents by BM25, one per line, best first ("Title: text", or just the text when it starts with
 * its title), each cut to {@value #MAX_DOC_CHARS} characters; empty when nothing matches. How many
 * of them a prompt shows, and how much of each, is the harness's choice.
 */
public final class SearchTool implements Tool {
  public static final String NAME = "search";
  public static final int RESULTS = 5;
  public static final int MAX_DOC_CHARS = 600;

  private final SearchIndex index;

  public SearchTool(SearchIndex index) {
    this.index = index;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "BM25 search over the corpus: input a query, output the " + RESULTS
        + " best documents, one per line, best first";
  }

  @Override
  public String apply(String input) {
    List<String> lines = new ArrayList<>();
    for (SearchIndex.Hit h : index.search(input, RESULTS)) {
      lines.add(line(h.title(), h.text()));
    }
    return String.join("\n", lines);
  }

  /** One document as a single line. */
  static String line(String title, String text) {
    String t = text.replaceAll("\\s+", " ").trim();
    String ti = title == null ? "" : title.replaceAll("\\s+", " ").trim();
    String s = ti.isEmpty() || t.startsWith(ti) ? t : ti + ": " + t;
    return s.length() > MAX_DOC_CHARS ? s.substring(0, MAX_DOC_CHARS) : s;
  }
}
