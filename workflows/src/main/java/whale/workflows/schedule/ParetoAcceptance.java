package whale.workflows.schedule;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Meta-Harness acceptance: the Pareto set of a phase's scored candidates over (success up, mean turns
 * down), and from it the first by (-success, turns); ties keep the earlier candidate.
 */
public final class ParetoAcceptance {
  /** A scored candidate; {@code order} is its position in the archive (earlier wins ties). */
  public record Scored(String id, double success, double meanTurns, int order) {}

  private ParetoAcceptance() {}

  public static List<Scored> paretoFront(List<Scored> candidates) {
    List<Scored> front = new ArrayList<>();
    for (Scored c : candidates) {
      boolean dominated = candidates.stream().anyMatch(o -> dominates(o, c));
      if (!dominated) {
        front.add(c);
      }
    }
    front.sort(ORDER);
    return front;
  }

  /** The winner, or throws if nothing was scored. */
  public static Scored pick(List<Scored> candidates) {
    List<Scored> front = paretoFront(candidates);
    if (front.isEmpty()) {
      throw new IllegalArgumentException("no scored candidate to accept");
    }
    return front.get(0);
  }

  static boolean dominates(Scored a, Scored b) {
    return a.success() >= b.success() && a.meanTurns() <= b.meanTurns()
        && (a.success() > b.success() || a.meanTurns() < b.meanTurns());
  }

  private static final Comparator<Scored> ORDER =
      Comparator.comparingDouble((Scored s) -> -s.success())
          .thenComparingDouble(Scored::meanTurns)
          .thenComparingInt(Scored::order);
}
