package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PatienceRuleTest {
  @Test
  void paperDefaultsAreAFifthOfAnEpoch() {
    PatienceRule r = PatienceRule.ofEpochFractions(16, 0.2, 0.2, 0.2);
    assertEquals(3, r.window());
    assertEquals(3, r.burnIn());
    assertEquals(3, r.patience());
    assertEquals(1, PatienceRule.ofEpochFractions(2, 0.2, 0.2, 0.2).window());
  }

  @Test
  void bestMovesOnlyOnStrictImprovementOfTheWindowMean() {
    PatienceRule r = new PatienceRule(2, 2, 2);
    PatienceRule.State s = PatienceRule.State.START;
    double[] signal = {0.1, 0.3, 0.3, 0.3, 0.3};
    // window means: 0.1, 0.2, 0.3, 0.3 (equal: best stays at step 3), 0.3 -> fires at step 5
    boolean[] fires = {false, false, false, false, true};
    int[] best = {1, 2, 3, 3, 3};
    for (int i = 0; i < signal.length; i++) {
      s = r.observe(s, signal[i]);
      assertEquals(best[i], s.bestStep(), "step " + (i + 1));
      assertEquals(fires[i], r.fires(s), "step " + (i + 1));
    }
  }

  @Test
  void neverFiresBeforeBurnInAndFiresExactlyWhenPatienceRunsOut() {
    SplittableRandom rnd = new SplittableRandom(5);
    for (int trial = 0; trial < 5000; trial++) {
      int w = 1 + rnd.nextInt(6);
      int burn = rnd.nextInt(8);
      int pat = 1 + rnd.nextInt(6);
      PatienceRule r = new PatienceRule(w, burn, pat);
      PatienceRule.State s = PatienceRule.State.START;
      double bestMean = Double.NEGATIVE_INFINITY;
      int bestStep = 0;
      java.util.ArrayDeque<Double> win = new java.util.ArrayDeque<>();
      for (int step = 1; step <= 40; step++) {
        double x = rnd.nextInt(4) / 4.0; // coarse values: many ties
        s = r.observe(s, x);
        win.addLast(x);
        if (win.size() > w) {
          win.removeFirst();
        }
        double mean = win.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
        if (mean > bestMean) {
          bestMean = mean;
          bestStep = step;
        }
        boolean expected = step > burn && step - bestStep >= pat;
        assertEquals(expected, r.fires(s), "trial " + trial + " step " + step);
        if (step <= burn) {
          assertFalse(r.fires(s), "fired during burn-in");
        }
      }
    }
  }

  @Test
  void harnessRuleRunsAtLeastSixStopsAfterTwoWithoutImprovementAndAtMostFifteen() {
    HarnessPatience h = HarnessPatience.DEFAULT;
    assertTrue(h.continues(5, 1), "fewer than 6 iterations always continue");
    assertTrue(h.continues(6, 5), "best at 5, one iteration without improvement");
    assertFalse(h.continues(6, 4), "two iterations without a strictly better best");
    assertTrue(h.continues(14, 14));
    assertFalse(h.continues(15, 15), "never more than 15");
    SplittableRandom rnd = new SplittableRandom(9);
    for (int trial = 0; trial < 2000; trial++) {
      int it = 1;
      int best = 1;
      double bestScore = rnd.nextDouble();
      while (h.continues(it, best)) {
        it++;
        double score = rnd.nextInt(5) / 4.0;
        if (score > bestScore) {
          bestScore = score;
          best = it;
        }
      }
      assertTrue(it >= 6 && it <= 15, "stopped after " + it);
      assertTrue(it == 15 || it - best >= 2, "stopped early at " + it + " with best " + best);
    }
    assertThrows(IllegalArgumentException.class, () -> new HarnessPatience(6, 2, 5));
  }
}
