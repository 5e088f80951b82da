package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import whale.workflows.Schedule;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import whale.workflows.schedule.PhasePlanner.Kind;
import whale.workflows.schedule.PhasePlanner.Phase;
import whale.workflows.schedule.PhasePlanner.Progress;

class PhasePlannerTest {
  static final List<String> SCHEDULES = List.of("whale", "whale-adaptive", "weight-only",
      "harness-only", "stagewise", "fst");

  /** Runs a schedule to the end; weight phases may end early (switch, patience) at random. */
  static List<Phase> simulate(String schedule, FixedSchedule f, Random rnd, List<Integer> stepsAfter) {
    PhasePlanner planner = new PhasePlanner(Schedule.of(schedule), f, HarnessPatience.DEFAULT);
    List<Phase> phases = new ArrayList<>();
    Progress p = Progress.START;
    for (int guard = 0; guard < 1000; guard++) {
      Phase next = planner.next(p);
      if (next.kind() == Kind.DONE) {
        return phases;
      }
      phases.add(next);
      int steps = p.stepsDone();
      if (next.kind() == Kind.WEIGHT) {
        assertTrue(next.stepLimit() > steps, "a weight phase must have a step to make");
        int limit = Math.min(next.stepLimit(), f.budgetSteps());
        steps = rnd.nextInt(4) == 0 ? steps + 1 + rnd.nextInt(limit - steps) : limit;
      }
      stepsAfter.add(steps);
      p = new Progress(next.round(), steps, next.kind());
    }
    throw new AssertionError("schedule " + schedule + " never ends");
  }

  @Test
  void invariantsHoldForEverySchedule() {
    Random rnd = new Random(42);
    for (int trial = 0; trial < 2000; trial++) {
      int spe = 1 + rnd.nextInt(20);
      FixedSchedule f = new FixedSchedule(spe, 1 + rnd.nextInt(2 * spe), 1 + rnd.nextInt(6 * spe),
          1 + rnd.nextInt(8), 1 + rnd.nextInt(30));
      for (String s : SCHEDULES) {
        List<Integer> stepsAfter = new ArrayList<>();
        List<Phase> phases = simulate(s, f, rnd, stepsAfter);
        for (int i = 0; i < phases.size(); i++) {
          Phase ph = phases.get(i);
          assertTrue(stepsAfter.get(i) <= f.budgetSteps(), s + ": budget exceeded");
          if (ph.kind() == Kind.HARNESS && !s.equals("harness-only")) {
            int before = i == 0 ? 0 : stepsAfter.get(i - 1);
            assertTrue(before < f.budgetSteps() || s.equals("stagewise"),
                s + ": harness phase after the budget ran out");
          }
          assertTrue(ph.round() <= Math.max(2, f.maxRounds()), s + ": too many rounds");
          assertEquals(s.equals("fst") && ph.kind() == Kind.HARNESS, ph.promptOnly());
        }
        if (s.equals("weight-only")) {
          assertTrue(phases.stream().allMatch(p -> p.kind() == Kind.WEIGHT) && phases.size() == 1);
        }
        if (s.equals("harness-only")) {
          assertTrue(phases.stream().allMatch(p -> p.kind() == Kind.HARNESS));
          assertEquals(new PhasePlanner(Schedule.of(s), f, HarnessPatience.DEFAULT).plannedHarnessPhases(),
              phases.size());
        }
      }
    }
  }

  @Test
  void fixedWhaleAlternatesAndSkipsTheHarnessPhaseAfterTheBudget() {
    // 4 steps per epoch, 2 per phase, budget 5 steps, I = 3
    FixedSchedule f = new FixedSchedule(4, 2, 5, 3, 30);
    List<Phase> phases = simulate("whale", f, new Random(0) {
      @Override
      public int nextInt(int bound) {
        return 1; // never end a phase early
      }
    }, new ArrayList<>());
    assertEquals(List.of(Kind.WEIGHT, Kind.HARNESS, Kind.WEIGHT, Kind.HARNESS, Kind.WEIGHT),
        phases.stream().map(Phase::kind).toList());
    assertEquals(List.of(2, 4, 5), phases.stream().filter(p -> p.kind() == Kind.WEIGHT)
        .map(Phase::stepLimit).toList());
    assertTrue(phases.stream().filter(p -> p.kind() == Kind.HARNESS)
        .allMatch(p -> p.iterations() == 3 && p.harnessRule() == null));
  }

  @Test
  void stagewiseRunsEveryHarnessIterationOfWhaleInOnePhase() {
    FixedSchedule f = new FixedSchedule(4, 2, 5, 3, 30);
    PhasePlanner p = new PhasePlanner(Schedule.STAGEWISE, f, HarnessPatience.DEFAULT);
    assertEquals(2, p.plannedHarnessPhases());
    Phase w = p.next(Progress.START);
    assertEquals(Kind.WEIGHT, w.kind());
    assertEquals(5, w.stepLimit());
    Phase h = p.next(new Progress(1, 5, Kind.WEIGHT));
    assertEquals(Kind.HARNESS, h.kind());
    assertEquals(6, h.iterations());
    assertEquals(Kind.DONE, p.next(new Progress(2, 5, Kind.HARNESS)).kind());
  }

  @Test
  void adaptivePhasesCarryTheirRules() {
    FixedSchedule f = new FixedSchedule(4, 2, 8, 3, 30);
    PhasePlanner p = new PhasePlanner(Schedule.WHALE_ADAPTIVE, f, HarnessPatience.DEFAULT);
    Phase w = p.next(new Progress(1, 3, Kind.HARNESS));
    assertTrue(w.adaptiveWeight());
    assertEquals(8, w.stepLimit(), "an adaptive weight phase may run to the budget");
    Phase h = p.next(new Progress(2, 5, Kind.WEIGHT));
    assertEquals(HarnessPatience.DEFAULT, h.harnessRule());
    assertEquals(15, h.iterations());
    assertEquals(Kind.DONE, p.next(new Progress(2, 8, Kind.WEIGHT)).kind());
    assertNull(new PhasePlanner(Schedule.WHALE, f, HarnessPatience.DEFAULT).next(new Progress(2, 5, Kind.WEIGHT))
        .harnessRule());
    assertFalse(w.promptOnly());
  }
}
