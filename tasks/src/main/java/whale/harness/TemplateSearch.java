package whale.harness;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * The built-in proposers' evolutionary search (Meta-Harness with a template generator), one for every
 * task: it reads the archive (genomes back from the sources, success rates, mean turns, trace
 * statistics), takes the valid candidates by (success ↓, turns ↑) as parents and writes single-axis
 * mutations of them, the change on each axis scored by the task's {@link Judge} from the parent's
 * traces. It never proposes a genome that is already in the archive; when every single change of
 * every parent is, it explores an untried combination. A task supplies its {@link GenomeSpace} and
 * judge, nothing else.
 */
public final class TemplateSearch<G extends Genome<G, A>, A extends Enum<A>> {

  /** The task's reading of a parent's traces: how promising the change {@code from -> to} is, and why. */
  @FunctionalInterface
  public interface Judge<G, A> {
    Judgement judge(A axis, G from, G to, TraceStats parent);
  }

  /** A change's prior score (higher is tried first) and the hypothesis the candidate states. */
  public record Judgement(double score, String reason) {}

  /**
   * Which parent a slot mutates after slot 0 (the best). Two rules, because the chess search was
   * written with the second one and its proposals are kept as they were.
   */
  public enum Parents {
    /** slot 1 the runner-up when within 0.1 of the best; later slots a coin between the best and the top three. */
    TOP_THREE,
    /** every later slot the runner-up on a coin toss, when it is within 0.1 of the best. */
    RUNNER_UP_COIN
  }

  /** Where the search goes when no single change of any parent is new (the search-QA one walks). */
  public enum Explore {
    /** any unarchived genome that differs from the best only on the allowed axes, uniformly. */
    ANY,
    /** a random walk of up to 200 single changes on the allowed axes from the best. */
    WALK
  }

  private final GenomeSpace<G, A> space;
  private final G initial;
  private final Judge<G, A> judge;
  private final Parents parentRule;
  private final Explore explore;

  /** @param initial h0, the parent while the archive holds no valid candidate of this space */
  public TemplateSearch(GenomeSpace<G, A> space, G initial, Judge<G, A> judge) {
    this(space, initial, judge, Parents.TOP_THREE, Explore.ANY);
  }

  public TemplateSearch(GenomeSpace<G, A> space, G initial, Judge<G, A> judge, Parents parentRule,
      Explore explore) {
    this.space = space;
    this.initial = initial;
    this.judge = judge;
    this.parentRule = parentRule;
    this.explore = explore;
  }

  private record Parent<G>(G genome, ArchiveEntry entry, int order) {}

  private record Option<G, A>(G genome, A axis, double score, String reason) {}

  /**
   * The axes a task's proposal may change: only {@code promptAxis} (the Fast-Slow control's prompt
   * text), every axis with {@code harness.chatForm}, otherwise all but {@code formAxis}.
   */
  public static <A extends Enum<A>> Set<A> allowedAxes(Class<A> axes, A promptAxis, A formAxis,
      boolean promptOnly, boolean chatForm) {
    return promptOnly ? java.util.EnumSet.of(promptAxis) : chatForm ? java.util.EnumSet.allOf(axes)
        : java.util.EnumSet.complementOf(java.util.EnumSet.of(formAxis));
  }

  /**
   * Up to {@code m} new candidates that change only {@code allowedAxes} (fewer only when every such
   * genome is archived), deterministic for (archive, m, seed, allowedAxes).
   */
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, Set<A> allowedAxes) {
    // in declaration order whatever the set's own order: the random draws follow it
    List<A> axes = space.axes().stream().filter(allowedAxes::contains).toList();
    if (axes.isEmpty()) {
      throw new IllegalArgumentException("no axis to mutate");
    }
    Random rnd = new Random(seed);
    Set<G> taken = new HashSet<>();
    List<Parent<G>> parents = new ArrayList<>();
    int index = 0;
    for (ArchiveEntry e : archive.entries()) {
      G g = space.fromSource(e.source());
      if (g != null) {
        taken.add(g);
        if (e.valid()) {
          parents.add(new Parent<>(g, e, index));
        }
      }
      index++;
    }
    parents.sort(Comparator.comparingDouble((Parent<G> p) -> -p.entry.successRate())
        .thenComparingDouble(p -> p.entry.meanTurns())
        .thenComparingInt(p -> p.order));
    if (parents.isEmpty()) {
      parents.add(new Parent<>(initial, new ArchiveEntry("h0", space.render(initial), true, null, 0, 0,
          TraceStats.EMPTY), -1));
    }
    List<HarnessCandidate> out = new ArrayList<>();
    Set<A> usedAxes = new HashSet<>();
    for (int slot = 0; slot < m; slot++) {
      HarnessCandidate c = mutate(pickParent(parents, slot, rnd), axes, taken, usedAxes, rnd);
      for (int i = 0; c == null && i < parents.size(); i++) {
        c = mutate(parents.get(i), axes, taken, usedAxes, rnd);
      }
      if (c == null) {
        c = explore == Explore.ANY ? any(parents.get(0), axes, taken, rnd) : walk(parents.get(0), axes, taken, rnd);
      }
      if (c == null) {
        break; // every allowed genome is archived
      }
      out.add(c);
    }
    return out;
  }

  private Parent<G> pickParent(List<Parent<G>> parents, int slot, Random rnd) {
    Parent<G> best = parents.get(0);
    boolean close = parents.size() > 1 && parents.get(1).entry.successRate() >= best.entry.successRate() - 0.1;
    if (parentRule == Parents.RUNNER_UP_COIN) {
      return slot > 0 && close && rnd.nextBoolean() ? parents.get(1) : best;
    }
    if (parents.size() == 1 || slot == 0) {
      return best;
    }
    if (slot == 1) {
      return close ? parents.get(1) : best;
    }
    return rnd.nextInt(2) == 0 ? best : parents.get(rnd.nextInt(Math.min(3, parents.size())));
  }

  private HarnessCandidate mutate(Parent<G> parent, List<A> axes, Set<G> taken, Set<A> usedAxes, Random rnd) {
    G g = parent.genome;
    Option<G, A> best = null;
    for (A axis : axes) {
      for (G n : g.neighbours(axis)) {
        if (taken.contains(n)) {
          continue;
        }
        Judgement j = judge.judge(axis, g, n, parent.entry.traceStats());
        double score = j.score();
        if (usedAxes.contains(axis)) {
          score -= 2; // spread one round's candidates over the axes
        }
        score += rnd.nextDouble() * 1.5;
        if (best == null || score > best.score) {
          best = new Option<>(n, axis, score, j.reason());
        }
      }
    }
    if (best == null) {
      return null;
    }
    taken.add(best.genome);
    usedAxes.add(best.axis);
    String axis = best.axis.name().toLowerCase(Locale.ROOT);
    String changes = "from " + parent.entry.name() + " (" + g.code() + "): " + axis + " " + g.value(best.axis)
        + " -> " + best.genome.value(best.axis);
    String hypothesis = best.reason + " (parent success " + percent(parent.entry.successRate()) + ", "
        + String.format(Locale.ROOT, "%.2f", parent.entry.meanTurns()) + " turns)";
    return new HarnessCandidate(best.genome.code(), hypothesis, changes, axis, space.render(best.genome));
  }

  private HarnessCandidate any(Parent<G> base, List<A> axes, Set<G> taken, Random rnd) {
    List<G> pool = new ArrayList<>();
    for (G g : space.all()) {
      // the axes the search may not change keep the best's values
      if (!taken.contains(g)
          && space.axes().stream().allMatch(a -> axes.contains(a) || g.value(a).equals(base.genome.value(a)))) {
        pool.add(g);
      }
    }
    return pool.isEmpty() ? null : combination(base, pool.get(rnd.nextInt(pool.size())), taken);
  }

  private HarnessCandidate walk(Parent<G> base, List<A> axes, Set<G> taken, Random rnd) {
    G g = base.genome;
    for (int step = 0; step < 200; step++) {
      List<G> ns = g.neighbours(axes.get(rnd.nextInt(axes.size())));
      g = ns.get(rnd.nextInt(ns.size()));
      if (!taken.contains(g)) {
        return combination(base, g, taken);
      }
    }
    return null;
  }

  private HarnessCandidate combination(Parent<G> base, G g, Set<G> taken) {
    taken.add(g);
    return new HarnessCandidate(g.code(), "every single change of the best candidates is archived; explore an"
        + " untried combination", "from " + base.entry.name() + ": " + base.genome.code() + " -> " + g.code(),
        "combination", space.render(g));
  }

  /** e.g. "35%": how the hypotheses quote rates. */
  public static String percent(double x) {
    return String.format(Locale.ROOT, "%.0f%%", 100 * x);
  }
}
