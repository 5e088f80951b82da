package whale.workflows.schedule;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Which checkpoints a run still holds, and which it no longer does. Pure and deterministic: the
 * workflow decides what to release, an idempotent activity pins the held set and deletes what no
 * run pins. A run holds its base, the last checkpoint of every weight phase, the best one by test
 * mean@8 so far (the earliest on ties, as the run's result counts it) and the checkpoints of its
 * last {@code keepLast} RSFT steps; the current checkpoint is always one of those.
 *
 * @param run the pin's owner in the store: the run's (parent) workflow id
 * @param phaseEnds in the order the phases ended
 * @param best null until the first test evaluation
 * @param recent the last {@code keepLast} steps' checkpoints, oldest first (a step that accepted
 *     nothing repeats its input's reference)
 * @param pinned the held set the store was last told; what left it since is released
 * @param deferRelease a comparison's cell: what it releases is unpinned but left in the store for
 *     the comparison to delete at its end (a sibling cell may find it through the memo until then)
 * @param deferred what it released so far that way; empty otherwise, and in states recorded before
 *     it existed
 */
public record Retention(
    String run,
    int keepLast,
    String base,
    List<String> phaseEnds,
    String best,
    double bestMeanAt8,
    List<String> recent,
    List<String> pinned,
    boolean deferRelease,
    List<String> deferred) {

  public Retention {
    phaseEnds = List.copyOf(phaseEnds);
    recent = List.copyOf(recent);
    pinned = List.copyOf(pinned);
    deferred = deferred == null ? List.of() : List.copyOf(deferred);
  }

  /** A run that holds only its base, and has pinned nothing yet. */
  public static Retention start(String run, int keepLast, String base) {
    if (keepLast < 1) {
      throw new IllegalArgumentException("keepLast must be >= 1, got " + keepLast);
    }
    return new Retention(run, keepLast, base, List.of(), null, Double.NEGATIVE_INFINITY, List.of(),
        List.of(), false, List.of());
  }

  /** After an RSFT step that left the run at {@code checkpoint}. */
  public Retention step(String checkpoint) {
    List<String> r = new ArrayList<>(recent);
    r.add(checkpoint);
    List<String> kept = r.subList(Math.max(0, r.size() - keepLast), r.size());
    return new Retention(run, keepLast, base, phaseEnds, best, bestMeanAt8, kept, pinned, deferRelease, deferred);
  }

  /** After a test evaluation of {@code checkpoint}; only a strictly better one replaces the best. */
  public Retention evaluated(String checkpoint, double meanAt8) {
    if (best != null && !(meanAt8 > bestMeanAt8)) {
      return this;
    }
    return new Retention(run, keepLast, base, phaseEnds, checkpoint, meanAt8, recent, pinned, deferRelease, deferred);
  }

  /** After a weight phase that ended at {@code checkpoint}. */
  public Retention phaseEnd(String checkpoint) {
    if (phaseEnds.contains(checkpoint)) {
      return this;
    }
    List<String> p = new ArrayList<>(phaseEnds);
    p.add(checkpoint);
    return new Retention(run, keepLast, base, p, best, bestMeanAt8, recent, pinned, deferRelease, deferred);
  }

  /** Every reference the run holds now, sorted (a stable activity input). */
  public List<String> held() {
    TreeSet<String> h = new TreeSet<>();
    h.add(base);
    h.addAll(phaseEnds);
    if (best != null) {
      h.add(best);
    }
    h.addAll(recent);
    return List.copyOf(h);
  }

  /** What was pinned and is held no more, sorted: the candidates for deletion. */
  public List<String> released() {
    TreeSet<String> r = new TreeSet<>(pinned);
    r.removeAll(held());
    return List.copyOf(r);
  }

  /** Whether the store must be told: the held set differs from the pinned one. */
  public boolean pinDue() {
    return !held().equals(pinned);
  }

  /** The same state once the store pinned {@link #held()}. */
  public Retention pinnedNow() {
    return new Retention(run, keepLast, base, phaseEnds, best, bestMeanAt8, recent, held(),
        deferRelease, deferred);
  }

  /** The same state, its releases left to the parent from now on. */
  public Retention withDeferredRelease() {
    return new Retention(run, keepLast, base, phaseEnds, best, bestMeanAt8, recent, pinned, true,
        deferred);
  }

  /** The same state once the store pinned {@link #held()} and kept {@link #released()}. */
  public Retention pinnedNowDeferring() {
    TreeSet<String> d = new TreeSet<>(deferred);
    d.addAll(released());
    return new Retention(run, keepLast, base, phaseEnds, best, bestMeanAt8, recent, held(),
        deferRelease, List.copyOf(d));
  }
}
