package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import whale.workflows.schedule.ParetoAcceptance.Scored;

/** Acceptance checked against a brute-force reference. */
class ParetoAcceptanceTest {

  static boolean dominates(Scored a, Scored b) {
    boolean noWorse = a.success() >= b.success() && a.meanTurns() <= b.meanTurns();
    boolean better = a.success() > b.success() || a.meanTurns() < b.meanTurns();
    return noWorse && better;
  }

  static boolean nonDominated(Scored c, List<Scored> all) {
    for (Scored o : all) {
      if (dominates(o, c)) {
        return false;
      }
    }
    return true;
  }

  /** Reference: max success, then min turns, then min order. */
  static Scored reference(List<Scored> all) {
    Scored best = null;
    for (Scored c : all) {
      if (best == null || c.success() > best.success()
          || (c.success() == best.success() && c.meanTurns() < best.meanTurns())
          || (c.success() == best.success() && c.meanTurns() == best.meanTurns()
              && c.order() < best.order())) {
        best = c;
      }
    }
    return best;
  }

  static List<Scored> randomCandidates(Random rnd) {
    int n = 1 + rnd.nextInt(12);
    boolean coarse = rnd.nextBoolean(); // a coarse grid forces ties and equal scores
    List<Integer> orders = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      orders.add(i);
    }
    if (rnd.nextBoolean()) {
      Collections.shuffle(orders, rnd);
    }
    List<Scored> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      double success = coarse ? rnd.nextInt(5) / 4.0 : rnd.nextInt(257) / 256.0;
      double turns = coarse ? 1 + rnd.nextInt(3) : 1 + rnd.nextDouble() * 15;
      out.add(new Scored("c" + i, success, turns, orders.get(i)));
    }
    if (n > 1 && rnd.nextInt(4) == 0) { // an exact duplicate score
      Scored c = out.get(rnd.nextInt(n));
      out.set(rnd.nextInt(n), new Scored("dup", c.success(), c.meanTurns(), n + 5));
    }
    return out;
  }

  @Test
  void pickMatchesBruteForce() {
    Random rnd = new Random(3);
    for (int trial = 0; trial < 50_000; trial++) {
      List<Scored> all = randomCandidates(rnd);
      List<Scored> copy = List.copyOf(all);
      Scored pick = ParetoAcceptance.pick(all);
      assertEquals(copy, all, "pick does not reorder its input");
      assertTrue(all.contains(pick));
      assertTrue(ParetoAcceptance.paretoFront(all).contains(pick), "pick is in the front");
      assertTrue(nonDominated(pick, all), "nothing dominates the pick: " + all);
      double maxSuccess = all.stream().mapToDouble(Scored::success).max().orElseThrow();
      assertEquals(maxSuccess, pick.success(), "pick has the max success: " + all);
      double minTurns = all.stream().filter(c -> c.success() == maxSuccess)
          .mapToDouble(Scored::meanTurns).min().orElseThrow();
      assertEquals(minTurns, pick.meanTurns(), "then the fewest turns: " + all);
      int minOrder = all.stream()
          .filter(c -> c.success() == maxSuccess && c.meanTurns() == minTurns)
          .mapToInt(Scored::order).min().orElseThrow();
      assertEquals(minOrder, pick.order(), "then the earliest: " + all);
      assertSame(reference(all), pick);
    }
  }

  @Test
  void frontMatchesBruteForce() {
    Random rnd = new Random(4);
    for (int trial = 0; trial < 50_000; trial++) {
      List<Scored> all = randomCandidates(rnd);
      List<Scored> front = ParetoAcceptance.paretoFront(all);
      for (Scored f : front) {
        assertTrue(nonDominated(f, all), "dominated member " + f + " in " + all);
      }
      long expected = all.stream().filter(c -> nonDominated(c, all)).count();
      assertEquals(expected, front.size(), "front " + front + " of " + all);
      for (Scored c : all) {
        if (nonDominated(c, all)) {
          assertTrue(front.contains(c), c + " missing from the front of " + all);
        }
      }
      // The front is listed in acceptance order: success down, turns up, order up.
      for (int i = 1; i < front.size(); i++) {
        Scored a = front.get(i - 1);
        Scored b = front.get(i);
        assertTrue(a.success() > b.success()
            || (a.success() == b.success() && a.meanTurns() < b.meanTurns())
            || (a.success() == b.success() && a.meanTurns() == b.meanTurns()
                && a.order() < b.order()), "front out of order: " + front);
      }
    }
  }

  @Test
  void examples() {
    Scored a = new Scored("a", 0.5, 3, 0);
    Scored b = new Scored("b", 0.5, 2, 1);
    Scored c = new Scored("c", 0.4, 1, 2);
    Scored d = new Scored("d", 0.3, 4, 3); // dominated by everything
    assertEquals(List.of(b, c), ParetoAcceptance.paretoFront(List.of(a, b, c, d)));
    assertSame(b, ParetoAcceptance.pick(List.of(d, c, a, b)));

    // Equal scores: both on the front, the earlier one wins whatever the list order.
    Scored early = new Scored("early", 0.75, 2, 0);
    Scored late = new Scored("late", 0.75, 2, 7);
    assertEquals(List.of(early, late), ParetoAcceptance.paretoFront(List.of(late, early)));
    assertSame(early, ParetoAcceptance.pick(List.of(late, early)));

    // A higher success wins even with many more turns.
    Scored slow = new Scored("slow", 0.51, 16, 9);
    assertSame(slow, ParetoAcceptance.pick(List.of(new Scored("half", 0.5, 1, 0), slow)));

    // One candidate: it is the front and the pick.
    assertSame(d, ParetoAcceptance.pick(List.of(d)));
  }

  @Test
  void emptyInputThrows() {
    assertThrows(IllegalArgumentException.class, () -> ParetoAcceptance.pick(List.of()));
    assertEquals(List.of(), ParetoAcceptance.paretoFront(List.of()));
  }
}
