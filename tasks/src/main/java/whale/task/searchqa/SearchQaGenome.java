package whale.task.searchqa;

import java.util.List;
import whale.harness.Genome;
import whale.harness.GenomeSpace;
import whale.harness.HarnessForm;

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
 * @param form COMPLETION, or (only with {@code harness.chatForm}) CHAT: the same prompt as the user's
 *     message through the model's chat template; the completion form is left out of the genome line
 */
public record SearchQaGenome(Query query, int docs, int chars, Format format, Hops hops, int votes,
    Parsing parsing, int maxNewTokens, HarnessForm form) implements Genome<SearchQaGenome, SearchQaGenome.Axis> {

  /** FORMAT is the only prompt-text axis (the Fast-Slow control's). */
  public static final GenomeSpace<SearchQaGenome, Axis> SPACE = GenomeSpace.<SearchQaGenome, Axis>of(Axis.class)
      .axis(Axis.QUERY, "query", SearchQaGenome::query, List.of(Query.values()))
      .axis(Axis.DOCS, "docs", SearchQaGenome::docs, List.of(1, 2, 3))
      .axis(Axis.CHARS, "chars", SearchQaGenome::chars, List.of(60, 100, 200))
      .axis(Axis.FORMAT, "format", SearchQaGenome::format, List.of(Format.values()))
      .axis(Axis.HOPS, "hops", SearchQaGenome::hops, List.of(Hops.values()))
      .axis(Axis.VOTES, "votes", SearchQaGenome::votes, List.of(1, 3, 5))
      .axis(Axis.PARSING, "parse", SearchQaGenome::parsing, List.of(Parsing.values()))
      .axis(Axis.MAX_NEW_TOKENS, "maxNew", SearchQaGenome::maxNewTokens, List.of(12, 24))
      .axis(Axis.FORM, "form", SearchQaGenome::form, List.of(HarnessForm.COMPLETION, HarnessForm.CHAT), HarnessForm.COMPLETION)
      .build(v -> new SearchQaGenome((Query) v.get(0), (Integer) v.get(1), (Integer) v.get(2), (Format) v.get(3),
          (Hops) v.get(4), (Integer) v.get(5), (Parsing) v.get(6), (Integer) v.get(7), (HarnessForm) v.get(8)),
          SearchQaRenderer::render);

  /** A completion-form genome (the eight axes before FORM existed). */
  public SearchQaGenome(Query query, int docs, int chars, Format format, Hops hops, int votes,
      Parsing parsing, int maxNewTokens) {
    this(query, docs, chars, format, hops, votes, parsing, maxNewTokens, HarnessForm.COMPLETION);
  }

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

  /** The axes a mutation changes. */
  public enum Axis { QUERY, DOCS, CHARS, FORMAT, HOPS, VOTES, PARSING, MAX_NEW_TOKENS, FORM }

  /**
   * h0, deliberately unoptimised: the raw question as query, three documents of 200 characters (more
   * than the model's context holds, so the best one is cut off), generic "Context/Question/Answer"
   * labels, one hop, one sample, the whole line as answer.
   */
  public static SearchQaGenome initial() {
    return new SearchQaGenome(Query.RAW, 3, 200, Format.CONTEXT, Hops.ONE, 1, Parsing.LINE, 24);
  }

  @Override
  public GenomeSpace<SearchQaGenome, Axis> space() {
    return SPACE;
  }

  /** Short readable code, e.g. "raw-k2-c100-dqa-two-v1-line-t24". */
  @Override
  public String code() {
    return query.name().toLowerCase() + "-k" + docs + "-c" + chars + "-" + format.name().toLowerCase() + "-"
        + hops.name().toLowerCase() + "-v" + votes + "-" + parsing.name().toLowerCase() + "-t" + maxNewTokens
        + form.codeSuffix();
  }

  public String className() {
    return "SQ_" + code().replace('-', '_');
  }
}
