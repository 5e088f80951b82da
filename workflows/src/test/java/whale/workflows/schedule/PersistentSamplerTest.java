package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import whale.workflows.schedule.PersistentSampler.Position;

class PersistentSamplerTest {

  static List<Integer> epoch(int size, long seed, int epoch) {
    return new PersistentSampler(size, seed, new Position(epoch, 0)).next(size);
  }

  @Test
  void everyEpochIsAPermutationAndBatchesNeverStraddle() {
    Random rnd = new Random(1);
    for (int trial = 0; trial < 2_000; trial++) {
      int size = 1 + rnd.nextInt(rnd.nextBoolean() ? 10 : 400);
      int batch = 1 + rnd.nextInt(size + 5); // may exceed size
      long seed = rnd.nextLong();
      int epochs = 1 + rnd.nextInt(4);
      PersistentSampler s = new PersistentSampler(size, seed, Position.START);
      int perEpoch = PersistentSampler.batchesPerEpoch(size, batch);
      for (int e = 0; e < epochs; e++) {
        boolean[] seen = new boolean[size];
        int count = 0;
        for (int k = 0; k < perEpoch; k++) {
          assertEquals(e, s.position().epoch(), "batch " + k + " of epoch " + e);
          List<Integer> b = s.next(batch);
          int expected = k < perEpoch - 1 ? batch : size - (perEpoch - 1) * batch;
          assertEquals(expected, b.size(), "only the last batch of an epoch may be short");
          for (int idx : b) {
            assertTrue(idx >= 0 && idx < size, "index in range: " + idx);
            assertTrue(!seen[idx], "index " + idx + " repeated within epoch " + e);
            seen[idx] = true;
            count++;
          }
        }
        assertEquals(size, count, "every index exactly once per epoch");
        assertEquals(new Position(e + 1, 0), s.position(), "epoch ends exactly on its last batch");
      }
    }
  }

  @Test
  void resumedSamplerContinuesTheSameSequence() {
    Random rnd = new Random(2);
    for (int trial = 0; trial < 2_000; trial++) {
      int size = 1 + rnd.nextInt(300);
      int batch = 1 + rnd.nextInt(size + 3);
      long seed = rnd.nextLong();
      int before = rnd.nextInt(3 * PersistentSampler.batchesPerEpoch(size, batch) + 2);
      int after = 1 + rnd.nextInt(2 * PersistentSampler.batchesPerEpoch(size, batch) + 2);

      PersistentSampler straight = new PersistentSampler(size, seed, Position.START);
      for (int i = 0; i < before; i++) {
        straight.next(batch);
      }
      Position saved = straight.position();
      // Round-trip the position through its parts, as workflow state would.
      PersistentSampler resumed = new PersistentSampler(size, seed,
          new Position(saved.epoch(), saved.offset()));
      for (int i = 0; i < after; i++) {
        assertEquals(straight.next(batch), resumed.next(batch),
            "batch " + (before + i) + " after resume (size " + size + ", batch " + batch + ")");
        assertEquals(straight.position(), resumed.position());
      }
    }
  }

  @Test
  void resumeWithADifferentBatchSizeStillCompletesTheEpochWithoutRepeats() {
    PersistentSampler s = new PersistentSampler(100, 5, Position.START);
    Set<Integer> first = new HashSet<>();
    for (int i = 0; i < 3; i++) {
      first.addAll(s.next(10));
    }
    PersistentSampler r = new PersistentSampler(100, 5, s.position());
    Set<Integer> rest = new HashSet<>();
    while (r.position().epoch() == 0) {
      for (int idx : r.next(7)) {
        assertTrue(rest.add(idx) && !first.contains(idx), "repeat of " + idx);
      }
    }
    assertEquals(30, first.size());
    assertEquals(70, rest.size());
  }

  @Test
  void endOfEpochOffsetIsTheSameAsStartOfTheNext() {
    for (long seed = 0; seed < 50; seed++) {
      assertEquals(new PersistentSampler(37, seed, new Position(2, 0)).next(5),
          new PersistentSampler(37, seed, new Position(1, 37)).next(5));
    }
  }

  @Test
  void sameSeedSameOrder() {
    PersistentSampler a = new PersistentSampler(200, 77, Position.START);
    PersistentSampler b = new PersistentSampler(200, 77, Position.START);
    for (int i = 0; i < 50; i++) {
      assertEquals(a.next(13), b.next(13));
    }
  }

  @Test
  void differentSeedsGiveDifferentOrders() {
    Set<List<Integer>> orders = new HashSet<>();
    for (long seed = 0; seed < 500; seed++) {
      assertTrue(orders.add(epoch(50, seed, 0)), "seed " + seed + " repeats another's order");
    }
    assertNotEquals(epoch(20, 1, 0), epoch(20, 2, 0));
    assertNotEquals(epoch(20, Long.MIN_VALUE, 0), epoch(20, Long.MAX_VALUE, 0));
  }

  @Test
  void epochsDifferFromEachOtherAndFromIdentity() {
    List<Integer> identity = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      identity.add(i);
    }
    for (long seed = 0; seed < 20; seed++) {
      Set<List<Integer>> seen = new HashSet<>();
      PersistentSampler s = new PersistentSampler(50, seed, Position.START);
      for (int e = 0; e < 30; e++) {
        List<Integer> order = s.next(50);
        assertNotEquals(identity, order, "seed " + seed + " epoch " + e + " is not shuffled");
        assertTrue(seen.add(order), "seed " + seed + " epoch " + e + " repeats an earlier epoch");
      }
    }
  }

  @Test
  void shuffleIsRoughlyUniform() {
    // All 6 orders of 3 items, over 6000 seeds: each expected 1000 times (sd ~29).
    Map<List<Integer>, Integer> counts = new HashMap<>();
    for (long seed = 0; seed < 6000; seed++) {
      counts.merge(epoch(3, seed, 0), 1, Integer::sum);
    }
    assertEquals(6, counts.size(), counts.toString());
    for (int c : counts.values()) {
      assertTrue(Math.abs(c - 1000) < 150, counts.toString());
    }
    // And each index lands in each slot about equally often for a larger set.
    int n = 10;
    int[][] slot = new int[n][n];
    for (long seed = 0; seed < 10_000; seed++) {
      List<Integer> o = epoch(n, seed, 3);
      for (int i = 0; i < n; i++) {
        slot[o.get(i)][i]++;
      }
    }
    for (int[] row : slot) {
      for (int c : row) {
        assertTrue(Math.abs(c - 1000) < 150, "slot count " + c);
      }
    }
  }

  @Test
  void singleElementAndBatchesPerEpoch() {
    PersistentSampler s = new PersistentSampler(1, 3, Position.START);
    for (int e = 0; e < 5; e++) {
      assertEquals(List.of(0), s.next(4));
      assertEquals(new Position(e + 1, 0), s.position());
    }
    assertEquals(16, PersistentSampler.batchesPerEpoch(512, 32));
    assertEquals(17, PersistentSampler.batchesPerEpoch(513, 32));
    assertEquals(1, PersistentSampler.batchesPerEpoch(5, 100));
    assertEquals(5, PersistentSampler.batchesPerEpoch(5, 1));
  }

  @Test
  void invalidArgumentsThrow() {
    assertThrows(IllegalArgumentException.class, () -> new PersistentSampler(0, 1, Position.START));
    assertThrows(IllegalArgumentException.class, () -> new PersistentSampler(-1, 1, Position.START));
    assertThrows(IllegalArgumentException.class, () -> new PersistentSampler(10, 1, new Position(0, -1)));
    assertThrows(IllegalArgumentException.class, () -> new PersistentSampler(10, 1, new Position(0, 11)));
    assertThrows(IllegalArgumentException.class, () -> new PersistentSampler(10, 1, new Position(-1, 0)));
    PersistentSampler s = new PersistentSampler(10, 1, Position.START);
    assertThrows(IllegalArgumentException.class, () -> s.next(0));
    assertThrows(IllegalArgumentException.class, () -> s.next(-5));
    assertEquals(Position.START, s.position(), "a rejected call does not move the sampler");
  }
}
