package whale.harness.searchqa;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The building blocks of a search-QA template harness, encoded as
 * {@code query=RAW;docs=2;chars=100;format=DQA;hops=TWO;votes=1;parse=LINE;maxNew=24} in the emitted
 * source's {@code // WHALE-GENOME:} comment.
 *
 * @param query how the search query is written from the question
 * @param docs how many retrieved documents the prompt shows
 * @param chars how many characters of each document it shows
 * @param format the prompt's labels
 * @param hops ONE: search, ask; TWO: search, have the model name the bridge entity, search for it,
 *     ask with both results
 * @param votes samples per question, majority answer
 * @param parsing which part of the completion is the answer
 * @param maxNewTokens the completion's length limit
 */
public record SearchQaGenome(Query query, int docs, int chars, Format format, Hops hops, int votes,
    Parsing parsing, int maxNewTokens) {

  public static final List<Integer> DOC_VALUES = List.of(1, 2, 3);
  public static final List<Integer> CHAR_VALUES = List.of(60, 100, 200);
  public static final List<Integer> VOTE_VALUES = List.of(1, 3, 5);
  public static final List<Integer> MAX_NEW_TOKEN_VALUES = List.of(12, 24);
  public static final String MARKER = "WHALE-GENOME:";
  private static final Pattern IN_SOURCE = Pattern.compile(Pattern.quote(MARKER) + "\\s*(\\S+)");

  /** RAW: the question as is; KEYWORDS: question words dropped; ENTITY: only its capitalised names. */
  public enum Query { RAW, KEYWORDS, ENTITY }

  /**
   * Prompt labels as Java string-literal text: before each document, before the question, and the
   * answer cue. DQA is the pretraining corpus's format.
   */
  public enum Format {
    DQA("D: ", "Q: ", "A:"),
    CONTEXT("Context: ", "Question: ", "Answer:"),
    PASSAGE("Passage: ", "Query: ", "Response:");

    public final String docLiteral;
    public final String questionLiteral;
    public final String answerLiteral;

    Format(String docLiteral, String questionLiteral, String answerLiteral) {
      this.docLiteral = docLiteral;
      this.questionLiteral = questionLiteral;
      this.answerLiteral = answerLiteral;
    }
  }

  public enum Hops { ONE, TWO }

  /** LINE: the whole first line; CLAUSE: up to the first '.', ',' or ';', at most four words. */
  public enum Parsing { LINE, CLAUSE }

  /** The axes a mutation changes; FORMAT is the only prompt-text axis (the Fast-Slow control's). */
  public enum Axis { QUERY, DOCS, CHARS, FORMAT, HOPS, VOTES, PARSING, MAX_NEW_TOKENS }

  public SearchQaGenome {
    if (!DOC_VALUES.contains(docs) || !CHAR_VALUES.contains(chars) || !VOTE_VALUES.contains(votes)
        || !MAX_NEW_TOKEN_VALUES.contains(maxNewTokens)) {
      throw new IllegalArgumentException("genome out of range: docs " + docs + ", chars " + chars
          + ", votes " + votes + ", maxNew " + maxNewTokens);
    }
  }

  /**
   * h0, deliberately unoptimised: the raw question as query, three documents of 200 characters (more
   * than the model's context holds, so the best one is cut off), generic "Context/Question/Answer"
   * labels, one hop, one sample, the whole line as answer.
   */
  public static SearchQaGenome initial() {
    return new SearchQaGenome(Query.RAW, 3, 200, Format.CONTEXT, Hops.ONE, 1, Parsing.LINE, 24);
  }

  public String encode() {
    return "query=" + query + ";docs=" + docs + ";chars=" + chars + ";format=" + format + ";hops=" + hops
        + ";votes=" + votes + ";parse=" + parsing + ";maxNew=" + maxNewTokens;
  }

  public static SearchQaGenome parse(String encoded) {
    Query q = null;
    Format f = null;
    Hops h = null;
    Parsing p = null;
    int d = -1;
    int c = -1;
    int v = -1;
    int t = -1;
    for (String kv : encoded.trim().split(";")) {
      String[] x = kv.split("=", 2);
      if (x.length != 2) {
        throw new IllegalArgumentException("bad genome " + encoded);
      }
      switch (x[0]) {
        case "query" -> q = Query.valueOf(x[1]);
        case "docs" -> d = Integer.parseInt(x[1]);
        case "chars" -> c = Integer.parseInt(x[1]);
        case "format" -> f = Format.valueOf(x[1]);
        case "hops" -> h = Hops.valueOf(x[1]);
        case "votes" -> v = Integer.parseInt(x[1]);
        case "parse" -> p = Parsing.valueOf(x[1]);
        case "maxNew" -> t = Integer.parseInt(x[1]);
        default -> throw new IllegalArgumentException("unknown genome key " + x[0]);
      }
    }
    if (q == null || f == null || h == null || p == null) {
      throw new IllegalArgumentException("incomplete genome " + encoded);
    }
    return new SearchQaGenome(q, d, c, f, h, v, p, t);
  }

  /** The genome embedded in a source, or null when there is none or it is not a search-QA genome. */
  public static SearchQaGenome fromSource(String source) {
    if (source == null) {
      return null;
    }
    Matcher m = IN_SOURCE.matcher(source);
    if (!m.find()) {
      return null;
    }
    try {
      return parse(m.group(1));
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Short readable code, e.g. "raw-k2-c100-dqa-two-v1-line-t24". */
  public String code() {
    return query.name().toLowerCase() + "-k" + docs + "-c" + chars + "-" + format.name().toLowerCase() + "-"
        + hops.name().toLowerCase() + "-v" + votes + "-" + parsing.name().toLowerCase() + "-t" + maxNewTokens;
  }

  public String className() {
    return "SQ_" + code().replace('-', '_');
  }

  public String value(Axis axis) {
    return switch (axis) {
      case QUERY -> query.name();
      case DOCS -> Integer.toString(docs);
      case CHARS -> Integer.toString(chars);
      case FORMAT -> format.name();
      case HOPS -> hops.name();
      case VOTES -> Integer.toString(votes);
      case PARSING -> parsing.name();
      case MAX_NEW_TOKENS -> Integer.toString(maxNewTokens);
    };
  }

  /** A copy with one axis set to {@code value} (its text form). */
  public SearchQaGenome with(Axis axis, String value) {
    return new SearchQaGenome(
        axis == Axis.QUERY ? Query.valueOf(value) : query,
        axis == Axis.DOCS ? Integer.parseInt(value) : docs,
        axis == Axis.CHARS ? Integer.parseInt(value) : chars,
        axis == Axis.FORMAT ? Format.valueOf(value) : format,
        axis == Axis.HOPS ? Hops.valueOf(value) : hops,
        axis == Axis.VOTES ? Integer.parseInt(value) : votes,
        axis == Axis.PARSING ? Parsing.valueOf(value) : parsing,
        axis == Axis.MAX_NEW_TOKENS ? Integer.parseInt(value) : maxNewTokens);
  }

  /** The values an axis takes, as text. */
  public static List<String> values(Axis axis) {
    return switch (axis) {
      case QUERY -> names(Query.values());
      case DOCS -> strings(DOC_VALUES);
      case CHARS -> strings(CHAR_VALUES);
      case FORMAT -> names(Format.values());
      case HOPS -> names(Hops.values());
      case VOTES -> strings(VOTE_VALUES);
      case PARSING -> names(Parsing.values());
      case MAX_NEW_TOKENS -> strings(MAX_NEW_TOKEN_VALUES);
    };
  }

  /** Every genome that differs from this one on {@code axis} only. */
  public List<SearchQaGenome> neighbours(Axis axis) {
    List<SearchQaGenome> out = new ArrayList<>();
    for (String v : values(axis)) {
      if (!v.equals(value(axis))) {
        out.add(with(axis, v));
      }
    }
    return out;
  }

  private static List<String> names(Enum<?>[] values) {
    List<String> out = new ArrayList<>();
    for (Enum<?> e : values) {
      out.add(e.name());
    }
    return out;
  }

  private static List<String> strings(List<Integer> values) {
    return values.stream().map(String::valueOf).toList();
  }
}
