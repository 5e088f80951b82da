package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fixed schedule, driven the way WhaleWorkflowImpl drives it, over many random sizes. */
class FixedScheduleTest {

  /** What one simulated run did. */
  record Run(int rounds, int steps, List<Integer> phaseLengths, int harnessPhases) {}

  /** The workflow's loop: rounds while startsRound; weight phase; harness phase if allowed. */
  static Run simulate(FixedSchedule s) {
    int round = 0;
    int steps = 0;
    int harness = 0;
    List<Integer> phases = new ArrayList<>();
    int guard = 0;
    while (s.startsRound(round + 1, steps)) {
      assertTrue(++guard <= 10_000, "the loop must end");
      round++;
      int n = s.weightSteps(steps);
      assertTrue(n >= 1, "a started round does at least one step: " + s + " at " + steps);
      assertTrue(n <= s.stepsPerWeightPhase(), "a phase never exceeds its length");
      phases.add(n);
      steps += n;
      assertTrue(steps <= s.budgetSteps(), "steps " + steps + " past budget in " + s);
      if (!s.harnessPhaseAfter(steps)) {
        break;
      }
      assertTrue(steps < s.budgetSteps(), "harness phase after the budget was spent: " + s);
      harness++;
    }
    return new Run(round, steps, phases, harness);
  }

  @Test
  void randomSchedulesRespectBudgetAndRounds() {
    Random rnd = new Random(20250101);
    for (int i = 0; i < 20_000; i++) {
      int spe = 1 + rnd.nextInt(64);
      int phase = 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 200);
      int budget = 1 + rnd.nextInt(rnd.nextBoolean() ? 20 : 3000);
      int iters = 1 + rnd.nextInt(15);
      int maxRounds = 1 + rnd.nextInt(30);
      FixedSchedule s = new FixedSchedule(spe, phase, budget, iters, maxRounds);
      Run r = simulate(s);

      assertTrue(r.rounds() >= 1 && r.rounds() <= maxRounds, s + " -> " + r);
      assertTrue(r.steps() <= budget, s + " -> " + r);
      long possible = (long) maxRounds * phase;
      if (possible >= budget) {
        assertEquals(budget, r.steps(), "budget reachable, must be spent exactly: " + s);
      } else {
        assertEquals(possible, r.steps(), "rounds run out first: every phase full: " + s);
        assertEquals(maxRounds, r.rounds(), s.toString());
      }
      int expectedRounds = (int) Math.min(maxRounds, (budget + (long) phase - 1) / phase);
      assertEquals(expectedRounds, r.rounds(), s.toString());
      // Every phase but the last is full length.
      for (int k = 0; k < r.phaseLengths().size() - 1; k++) {
        assertEquals(phase, r.phaseLengths().get(k), s + " -> " + r);
      }
      // A harness phase follows every weight phase except the one that spent the budget.
      int expectedHarness = r.steps() == budget ? r.rounds() - 1 : r.rounds();
      assertEquals(expectedHarness, r.harnessPhases(), s + " -> " + r);
      // After the loop nothing more starts.
      assertFalse(s.startsRound(r.rounds() + 1, r.steps()) && r.rounds() < maxRounds
          && r.steps() < budget, "the loop stopped early: " + s);
    }
  }

  @Test
  void noHarnessPhaseAndNoRoundOnceTheBudgetIsSpent() {
    FixedSchedule s = new FixedSchedule(16, 10, 96, 6, 30);
    assertFalse(s.harnessPhaseAfter(96));
    assertFalse(s.harnessPhaseAfter(97));
    assertTrue(s.harnessPhaseAfter(95));
    assertFalse(s.startsRound(5, 96));
    assertFalse(s.startsRound(31, 0));
    assertTrue(s.startsRound(30, 95));
    assertEquals(0, s.weightSteps(96));
    assertEquals(0, s.weightSteps(200));
    assertEquals(6, s.weightSteps(90));
    assertEquals(10, s.weightSteps(0));
  }

  @Test
  void paperSettingGivesTenStepPhasesAndNinetySixSteps() {
    // E = 0.6, N = 512 problems, B = 32 prompts per step: 16 steps/epoch, round(9.6) = 10 per phase;
    // a 6 epoch budget is 96 steps: 9 full phases + one of 6, and 9 harness phases.
    FixedSchedule s = FixedSchedule.of(512, 32, 0.6, 6.0, 6, 30);
    assertEquals(new FixedSchedule(16, 10, 96, 6, 30), s);
    Run r = simulate(s);
    assertEquals(10, r.rounds());
    assertEquals(96, r.steps());
    assertEquals(9, r.harnessPhases());
    assertEquals(6, r.phaseLengths().get(9));
  }

  @Test
  void ofComputesStepsPerEpochPhaseAndBudget() {
    Random rnd = new Random(99);
    for (int i = 0; i < 20_000; i++) {
      int n = 8 + rnd.nextInt(100_000);
      int b = 1 + rnd.nextInt(Math.min(n, rnd.nextBoolean() ? 64 : 100_000));
      double e = rnd.nextInt(10) == 0 ? 1e-4 : rnd.nextDouble() * 3;
      double budget = 1e-3 + rnd.nextDouble() * 20;
      int iters = 1 + rnd.nextInt(20);
      int rounds = 1 + rnd.nextInt(30);
      FixedSchedule s = FixedSchedule.of(n, b, e, budget, iters, rounds);
      int spe = (int) Math.ceil((double) n / b);
      assertEquals(spe, s.stepsPerEpoch(), n + "/" + b);
      assertTrue((long) s.stepsPerEpoch() * b >= n && (long) (s.stepsPerEpoch() - 1) * b < n);
      assertEquals(Math.max(1, Math.round(e * spe)), s.stepsPerWeightPhase(), e + "*" + spe);
      assertTrue(s.stepsPerWeightPhase() >= 1);
      assertEquals(Math.max(1, Math.round(budget * spe)), s.budgetSteps(), budget + "*" + spe);
      assertEquals(iters, s.iterationsPerHarnessPhase());
      assertEquals(rounds, s.maxRounds());
    }
  }

  @Test
  void ofRoundsAndClampsPhaseLength() {
    assertEquals(1, FixedSchedule.of(512, 32, 0.01, 6, 6, 30).stepsPerWeightPhase());
    assertEquals(1, FixedSchedule.of(8, 8, 0.6, 0.1, 6, 30).budgetSteps());
    assertEquals(17, FixedSchedule.of(513, 32, 1.0, 1.0, 6, 30).stepsPerEpoch());
    assertEquals(1, FixedSchedule.of(8, 100, 0.6, 1.0, 6, 30).stepsPerEpoch());
  }

  @Test
  void nonPositiveSizesThrow() {
    assertThrows(IllegalArgumentException.class, () -> new FixedSchedule(0, 1, 1, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new FixedSchedule(1, 0, 1, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new FixedSchedule(1, 1, 0, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new FixedSchedule(1, 1, 1, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new FixedSchedule(1, 1, 1, 1, 0));
    assertThrows(IllegalArgumentException.class, () -> new FixedSchedule(1, 1, 1, 1, -3));
  }
}
