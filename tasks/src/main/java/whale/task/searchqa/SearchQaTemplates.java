package whale.task.searchqa;

import static whale.harness.TemplateSearch.percent;

import java.util.List;
import java.util.Locale;
import whale.harness.ArchiveView;
import whale.harness.HarnessCandidate;
import whale.harness.TemplateLibrary;
import whale.harness.TemplateSearch;
import whale.harness.TemplateSearch.Judgement;
import whale.harness.TraceStats;
import whale.task.searchqa.SearchQaGenome.Axis;
import whale.task.searchqa.SearchQaGenome.Hops;

/**
 * The search-QA task's built-in proposer: the {@link TemplateSearch} over {@link SearchQaGenome}s,
 * with single-axis changes chosen by what the parent's traces show (turn-budget hits → fewer votes;
 * blank answers → prompt format and parsing; long completions → tighter parsing).
 */
public final class SearchQaTemplates implements TemplateLibrary {
  // explores by a random walk from the best: the rule this search was written with, kept with its proposals
  private static final TemplateSearch<SearchQaGenome, Axis> SEARCH = new TemplateSearch<>(SearchQaGenome.SPACE,
      SearchQaGenome.initial(), SearchQaTemplates::judge, TemplateSearch.Parents.TOP_THREE,
      TemplateSearch.Explore.WALK);

  @Override
  public HarnessCandidate initial() {
    SearchQaGenome g = SearchQaGenome.initial();
    return new HarnessCandidate("h0-" + g.code(), "the task's starting harness: search with the question, "
        + "show three documents, ask once, take the whole line", "none (starting point)", "initial",
        SearchQaRenderer.render(g));
  }

  @Override
  public HarnessCandidate initial(whale.harness.HarnessForm form) {
    if (form != whale.harness.HarnessForm.CHAT) {
      return TemplateLibrary.super.initial(form);
    }
    SearchQaGenome g = SearchQaGenome.initial();
    g = new SearchQaGenome(g.query(), g.docs(), g.chars(), g.format(), g.hops(), g.votes(), g.parsing(),
        g.maxNewTokens(), form);
    return new HarnessCandidate("h0-" + g.code(), "the task's starting harness in the chat form ("
        + form.reason() + "): search with the question, show three documents, ask once, take the "
        + "whole line", "none (starting point)", "initial", SearchQaRenderer.render(g));
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly) {
    return propose(archive, m, seed, promptOnly, false);
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly,
      boolean chatForm) {
    // Prompt text is the FORMAT axis: the label literals around documents, question and answer.
    return SEARCH.propose(archive, m, seed,
        TemplateSearch.allowedAxes(Axis.class, Axis.FORMAT, Axis.FORM, promptOnly, chatForm));
  }

  /** What the parent's traces say about the change {@code g -> n} on {@code axis}. */
  private static Judgement judge(Axis axis, SearchQaGenome g, SearchQaGenome n, TraceStats st) {
    double tokensPerCall = st.meanTurns() > 0 ? st.meanCompletionTokens() / st.meanTurns() : 0;
    double score = switch (axis) {
      case FORMAT, DOCS, HOPS -> 3;
      case CHARS, QUERY, VOTES -> 2;
      case PARSING, MAX_NEW_TOKENS, FORM -> 1;
    };
    String reason = defaultReason(axis, g, n);
    if (st.turnBudgetFraction() > 0.05 && axis == Axis.VOTES) {
      score += n.votes() < g.votes() ? 5 : -3;
      reason = percent(st.turnBudgetFraction()) + " of episodes hit the turn budget; "
          + (n.votes() < g.votes() ? "fewer votes keep them within it" : "more votes cost more turns");
    }
    if (st.unparseableFraction() > 0.2 && (axis == Axis.FORMAT || axis == Axis.PARSING)) {
      score += 2;
      reason = percent(st.unparseableFraction()) + " of answers were blank; " + reason;
    }
    if (tokensPerCall > 10 && ((axis == Axis.PARSING && n.parsing() == SearchQaGenome.Parsing.CLAUSE)
        || (axis == Axis.MAX_NEW_TOKENS && n.maxNewTokens() < g.maxNewTokens()))) {
      score += 2;
      reason = String.format(Locale.ROOT, "completions ran %.0f tokens per call, longer than an entity "
          + "name; ", tokensPerCall) + reason;
    }
    return new Judgement(score, reason);
  }

  private static String defaultReason(Axis axis, SearchQaGenome from, SearchQaGenome to) {
    return switch (axis) {
      case QUERY -> switch (to.query()) {
        case RAW -> "the whole question keeps every term BM25 may need";
        case KEYWORDS -> "question words match nothing in the documents; dropping them sharpens the query";
        case ENTITY -> "the names in the question are what the right document is about";
      };
      case DOCS -> to.docs() < from.docs()
          ? "fewer documents keep the prompt within the model's context and the answer near the question"
          : "more documents raise the chance that the answer is shown";
      case CHARS -> to.chars() < from.chars()
          ? "shorter excerpts leave room in the context for the documents that matter"
          : "longer excerpts keep answers that sit late in a document";
      case FORMAT -> to.format() == SearchQaGenome.Format.DQA
          ? "the D:/Q:/A: labels are the ones the model was pretrained on"
          : "the " + to.format() + " labels may suit the model better";
      case HOPS -> to.hops() == Hops.TWO
          ? "two-hop questions need the bridge entity's own document: let the model name it, then search"
              + " for it"
          : "one search and one model call suffice for one-hop questions";
      case VOTES -> to.votes() > from.votes()
          ? "a majority of " + to.votes() + " samples smooths out sampling errors"
          : "fewer samples (" + to.votes() + ") cut turns";
      case PARSING -> to.parsing() == SearchQaGenome.Parsing.CLAUSE
          ? "answers are names; cutting at the first clause drops trailing words"
          : "the whole line keeps answers that contain punctuation";
      case MAX_NEW_TOKENS -> to.maxNewTokens() < from.maxNewTokens()
          ? "answers are short; a tighter limit stops rambling"
          : "a longer limit avoids cutting answers off";
      case FORM -> to.form().reason();
    };
  }
}
