package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import whale.workflows.Schedule;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import whale.workflows.Adjustment;
import whale.workflows.ExperimentSpec;

class LimitsTest {
  // defaults: 512 problems / 32 per step = 16 steps per epoch; budget 6 epochs = 96 steps
  final Limits limits = Limits.of(ExperimentSpec.defaults());

  @Test
  void theSpecDefaultsBecomeSteps() {
    assertEquals(16, limits.stepsPerEpoch());
    assertEquals(96, limits.budgetSteps());
    assertEquals(10, limits.stepsPerWeightPhase()); // 0.6 epoch
    assertEquals(3, limits.patienceSteps()); // 0.2 epoch
    assertEquals(HarnessPatience.DEFAULT, limits.harness());
  }

  @Test
  void adjustmentsAreCheckedAgainstTheRun() {
    assertEquals(List.of("nothing to change: set weightBudgetEpochs, patienceEpochs, harnessPatience "
        + "or harnessMaxIterations"), limits.problems(new Adjustment(null, null, null, null), Schedule.WHALE, 0));
    assertTrue(limits.problems(new Adjustment(1.0, null, null, null), Schedule.WHALE, 20).get(0)
        .contains("16 steps, below the 20 steps already done"));
    assertTrue(limits.problems(new Adjustment(null, 0.5, null, null), Schedule.WHALE, 0).get(0)
        .contains("no patience rule"));
    assertTrue(limits.problems(new Adjustment(null, null, null, 3), Schedule.WHALE_ADAPTIVE, 0).get(0)
        .contains("at least the minimum of 6"));
    assertTrue(limits.problems(new Adjustment(2.0, 0.5, 3, 20), Schedule.WHALE_ADAPTIVE, 10).isEmpty());
  }

  @Test
  void anAdjustmentChangesOnlyWhatItNames() {
    Limits a = limits.adjusted(new Adjustment(2.0, null, 4, null));
    assertEquals(32, a.budgetSteps());
    assertEquals(limits.patienceSteps(), a.patienceSteps());
    assertEquals(new HarnessPatience(6, 4, 15), a.harness());
    assertEquals(limits.stepsPerWeightPhase(), a.stepsPerWeightPhase());
  }
}
