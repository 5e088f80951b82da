package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Activity slots per queue from the CPU slots a process may use. */
class WhaleWorkersTest {
  @AfterEach
  void clear() {
    System.clearProperty("whale.cpuSlots");
  }

  @Test
  void evalGetsTheCoresTheGpuJobLeavesAndAtLeastOne() {
    System.setProperty("whale.cpuSlots", "4");
    EnumSet<Queue> all = EnumSet.allOf(Queue.class);
    assertEquals(1, WhaleWorkers.slots(Queue.GPU, all, 1), "a GPU trains one model at a time");
    assertEquals(4, WhaleWorkers.slots(Queue.GPU, all, 0), "without one, training takes the cores");
    assertEquals(3, WhaleWorkers.slots(Queue.EVAL, all, 1));
    assertEquals(4, WhaleWorkers.slots(Queue.EVAL, all, 0), "without a GPU, Cores shares the cores");
    assertEquals(4, WhaleWorkers.slots(Queue.EVAL, EnumSet.of(Queue.EVAL), 0));
    assertEquals(2, WhaleWorkers.slots(Queue.HARNESS, all, 0));
    System.setProperty("whale.cpuSlots", "1");
    assertEquals(1, WhaleWorkers.slots(Queue.EVAL, all, 1));
    assertEquals(1, WhaleWorkers.slots(Queue.EVAL, all, 0));
    assertEquals(1, WhaleWorkers.slots(Queue.GPU, all, 0));
  }

  @Test
  void aBadSlotCountNamesTheSetting() {
    System.setProperty("whale.cpuSlots", "0");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, WhaleWorkers::cpuSlots);
    assertTrue(e.getMessage().contains("whale.cpuSlots") && e.getMessage().contains("'0'"), e.getMessage());
    System.setProperty("whale.cpuSlots", "two");
    assertThrows(IllegalArgumentException.class, WhaleWorkers::cpuSlots);
  }
}
