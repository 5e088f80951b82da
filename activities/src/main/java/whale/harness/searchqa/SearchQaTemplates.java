package whale.harness.searchqa;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import whale.harness.ArchiveEntry;
import whale.harness.ArchiveView;
import whale.harness.HarnessCandidate;
import whale.harness.TemplateLibrary;
import whale.harness.TemplateProposer;
import whale.harness.TraceStats;
import whale.harness.searchqa.SearchQaGenome.Axis;
import whale.harness.searchqa.SearchQaGenome.Hops;

/**
 * The search-QA task's built-in proposer: harnesses are {@link SearchQaGenome}s; it reads the
 * archive (genomes back from the sources, success, turns, trace statistics), takes the best
 * candidates by (success ↓, turns ↑) as parents and writes single-axis mutations chosen by what
 * their traces show (turn-budget hits → fewer votes; blank answers → prompt format and parsing; long
 * completions → tighter parsing). It never proposes a genome already in the archive.
 */
public final class SearchQaTemplates implements TemplateLibrary {
  @Override
  public HarnessCandidate initial() {
    SearchQaGenome g = SearchQaGenome.initial();
    return new HarnessCandidate("h0-" + g.code(), "the task's starting harness: search with the question, "
        + "show three documents, ask once, take the whole line", "none (starting point)", "initial",
        SearchQaRenderer.render(g));
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly) {
    // Prompt text is the FORMAT axis: the label literals around documents, question and answer.
    Set<Axis> axes = promptOnly ? EnumSet.of(Axis.FORMAT) : EnumSet.allOf(Axis.class);
    Random rnd = new Random(seed);
    Set<SearchQaGenome> taken = new HashSet<>();
    List<Parent> parents = new ArrayList<>();
    int index = 0;
    for (ArchiveEntry e : archive.entries()) {
      SearchQaGenome g = SearchQaGenome.fromSource(e.source());
      if (g != null) {
        taken.add(g);
        if (e.valid()) {
          parents.add(new Parent(g, e, index));
        }
      }
      index++;
    }
    parents.sort(Comparator.comparingDouble((Parent p) -> -p.entry.successRate())
        .thenComparingDouble(p -> p.entry.meanTurns())
        .thenComparingInt(p -> p.order));
    if (parents.isEmpty()) {
      SearchQaGenome h0 = SearchQaGenome.initial();
      parents.add(new Parent(h0, new ArchiveEntry("h0", SearchQaRenderer.render(h0), true, null, 0, 0,
          TraceStats.EMPTY), -1));
    }
    List<HarnessCandidate> out = new ArrayList<>();
    Set<Axis> usedAxes = EnumSet.noneOf(Axis.class);
    for (int slot = 0; slot < m; slot++) {
      HarnessCandidate c = mutate(pickParent(parents, slot, rnd), axes, taken, usedAxes, rnd);
      for (int i = 0; c == null && i < parents.size(); i++) {
        c = mutate(parents.get(i), axes, taken, usedAxes, rnd);
      }
      if (c == null) {
        c = fresh(parents.get(0), axes, taken, rnd);
      }
      if (c == null) {
        break; // every allowed genome is archived
      }
      out.add(c);
    }
    return out;
  }

  private record Parent(SearchQaGenome genome, ArchiveEntry entry, int order) {}

  private record Option(SearchQaGenome genome, Axis axis, double score, String reason) {}

  private static Parent pickParent(List<Parent> parents, int slot, Random rnd) {
    if (parents.size() == 1 || slot == 0) {
      return parents.get(0);
    }
    if (slot == 1) {
      Parent second = parents.get(1);
      return second.entry.successRate() >= parents.get(0).entry.successRate() - 0.1 ? second : parents.get(0);
    }
    return rnd.nextInt(2) == 0 ? parents.get(0) : parents.get(rnd.nextInt(Math.min(3, parents.size())));
  }

  private static HarnessCandidate mutate(Parent parent, Set<Axis> axes, Set<SearchQaGenome> taken,
      Set<Axis> usedAxes, Random rnd) {
    TraceStats st = parent.entry.traceStats();
    SearchQaGenome g = parent.genome;
    double tokensPerCall = st.meanTurns() > 0 ? st.meanCompletionTokens() / st.meanTurns() : 0;
    List<Option> options = new ArrayList<>();
    for (Axis axis : axes) {
      for (SearchQaGenome n : g.neighbours(axis)) {
        if (taken.contains(n)) {
          continue;
        }
        double score = switch (axis) {
          case FORMAT, DOCS, HOPS -> 3;
          case CHARS, QUERY, VOTES -> 2;
          case PARSING, MAX_NEW_TOKENS -> 1;
        };
        String reason = defaultReason(axis, g, n);
        if (st.turnBudgetFraction() > 0.05 && axis == Axis.VOTES) {
          score += n.votes() < g.votes() ? 5 : -3;
          reason = pct(st.turnBudgetFraction()) + " of episodes hit the turn budget; "
              + (n.votes() < g.votes() ? "fewer votes keep them within it" : "more votes cost more turns");
        }
        if (st.unparseableFraction() > 0.2 && (axis == Axis.FORMAT || axis == Axis.PARSING)) {
          score += 2;
          reason = pct(st.unparseableFraction()) + " of answers were blank; " + reason;
        }
        if (tokensPerCall > 10 && ((axis == Axis.PARSING && n.parsing() == SearchQaGenome.Parsing.CLAUSE)
            || (axis == Axis.MAX_NEW_TOKENS && n.maxNewTokens() < g.maxNewTokens()))) {
          score += 2;
          reason = String.format(Locale.ROOT, "completions ran %.0f tokens per call, longer than an entity "
              + "name; ", tokensPerCall) + reason;
        }
        if (usedAxes.contains(axis)) {
          score -= 2;
        }
        score += rnd.nextDouble() * 1.5;
        options.add(new Option(n, axis, score, reason));
      }
    }
    Option best = null;
    for (Option o : options) {
      if (best == null || o.score > best.score) {
        best = o;
      }
    }
    if (best == null) {
      return null;
    }
    taken.add(best.genome);
    usedAxes.add(best.axis);
    String axisName = best.axis.name().toLowerCase(Locale.ROOT);
    String changes = "from " + parent.entry.name() + " (" + g.code() + "): " + axisName + " " + g.value(best.axis)
        + " -> " + best.genome.value(best.axis);
    String hypothesis = best.reason + " (parent success " + pct(parent.entry.successRate()) + ", "
        + String.format(Locale.ROOT, "%.2f", parent.entry.meanTurns()) + " turns)";
    return new HarnessCandidate(best.genome.code(), hypothesis, changes, axisName,
        SearchQaRenderer.render(best.genome));
  }

  private static HarnessCandidate fresh(Parent base, Set<Axis> axes, Set<SearchQaGenome> taken, Random rnd) {
    // a random walk over the allowed axes from the best parent, to an unarchived genome
    SearchQaGenome g = base.genome;
    List<Axis> allowed = new ArrayList<>(axes);
    for (int step = 0; step < 200; step++) {
      Axis a = allowed.get(rnd.nextInt(allowed.size()));
      List<SearchQaGenome> ns = g.neighbours(a);
      g = ns.get(rnd.nextInt(ns.size()));
      if (!taken.contains(g)) {
        taken.add(g);
        return new HarnessCandidate(g.code(), "every single change of the best candidates is archived; "
            + "explore an untried combination", "from " + base.entry.name() + ": " + base.genome.code()
            + " -> " + g.code(), "combination", SearchQaRenderer.render(g));
      }
    }
    return null;
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
    };
  }

  private static String pct(double x) {
    return String.format(Locale.ROOT, "%.0f%%", 100 * x);
  }

  /** The package every template harness is emitted in. */
  static final String PACKAGE = TemplateProposer.PACKAGE;
}
