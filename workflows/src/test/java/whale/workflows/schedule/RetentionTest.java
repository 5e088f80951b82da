package whale.workflows.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.common.converter.DefaultDataConverter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The retention decision: what a run holds after each event, and what it releases. */
class RetentionTest {
  static final String BASE = "sha256:" + "0".repeat(64);

  static String c(int step) {
    return "sha256:" + String.format("%064d", step);
  }

  @Test
  void keepsBasePhaseEndsBestAndTheLastStepsAndReleasesTheRest() {
    Retention r = Retention.start("run", 2, BASE).evaluated(BASE, 0.10);
    assertTrue(r.pinDue(), "the base is not pinned yet");
    assertEquals(List.of(BASE), r.held());
    r = r.pinnedNow();
    assertFalse(r.pinDue());

    // weight phase 1: steps 1..3, test evaluation after step 2 is the best so far
    r = r.step(c(1)).pinnedNow();
    r = r.step(c(2)).evaluated(c(2), 0.30).pinnedNow();
    r = r.step(c(3));
    assertEquals(List.of(BASE, c(2), c(3)), r.held(), "c1 fell out of the last two steps");
    assertEquals(List.of(c(1)), r.released());
    r = r.pinnedNow().phaseEnd(c(3)).evaluated(c(3), 0.25); // worse than c2: c2 stays best
    assertFalse(r.pinDue(), "a phase end already held changes nothing");

    // weight phase 2: steps 4..6; c2 (best) and c3 (phase end) outlive the window
    r = r.step(c(4)).pinnedNow().step(c(5)).pinnedNow().step(c(6));
    assertEquals(List.of(BASE, c(2), c(3), c(5), c(6)), r.held());
    assertEquals(List.of(c(4)), r.released());
    r = r.pinnedNow().evaluated(c(6), 0.50);
    assertEquals(c(6), r.best());
    r = r.step(c(7));
    assertEquals(List.of(BASE, c(3), c(6), c(7)), r.held(), "c2 is no longer the best");
    assertEquals(List.of(c(2), c(5)), r.released());
  }

  @Test
  void keepLastOneHoldsOnlyTheCurrentStep() {
    Retention r = Retention.start("run", 1, BASE).pinnedNow();
    r = r.step(c(1)).pinnedNow().step(c(2));
    assertEquals(List.of(BASE, c(2)), r.held());
    assertEquals(List.of(c(1)), r.released());
  }

  @Test
  void aComparisonsCellCollectsWhatItReleasesForItsParent() {
    Retention r = Retention.start("cell", 1, BASE).withDeferredRelease().pinnedNowDeferring();
    assertTrue(r.deferRelease());
    r = r.step(c(1)).pinnedNowDeferring().step(c(2));
    assertEquals(List.of(c(1)), r.released());
    r = r.pinnedNowDeferring().step(c(3)).pinnedNowDeferring();
    assertEquals(List.of(BASE, c(3)), r.held());
    assertFalse(r.pinDue());
    assertEquals(List.of(c(1), c(2)), r.deferred(), "every release kept for the parent, sorted");
    assertTrue(r.step(c(4)).deferRelease(), "the choice travels with the state");
    // a state recorded before deferral existed reads as none deferred
    assertEquals(List.of(), new Retention("old", 1, BASE, List.of(), null,
        Double.NEGATIVE_INFINITY, List.of(), List.of(), false, null).deferred());
  }

  @Test
  void aStepThatAcceptedNothingRepeatsItsInputAndReleasesNothingTwice() {
    Retention r = Retention.start("run", 2, BASE).pinnedNow();
    r = r.step(c(1)).pinnedNow().step(c(1)); // no update: the same reference again
    assertFalse(r.pinDue());
    r = r.step(c(2));
    assertEquals(List.of(BASE, c(1), c(2)), r.held());
    r = r.pinnedNow().step(c(3));
    assertEquals(List.of(c(1)), r.released());
    r = r.pinnedNow().step(c(4));
    assertEquals(List.of(c(2)), r.released(), "c1 was released once, not again");
  }

  @Test
  void tiesKeepTheEarliestBestAsTheResultCountsIt() {
    Retention r = Retention.start("run", 1, BASE).evaluated(BASE, 0.2).step(c(1))
        .evaluated(c(1), 0.2);
    assertEquals(BASE, r.best());
    r = r.step(c(2)).evaluated(c(2), 0.2000001);
    assertEquals(c(2), r.best());
  }

  @Test
  void theBaseIsNeverReleased() {
    Retention r = Retention.start("run", 1, BASE).pinnedNow();
    for (int i = 1; i <= 5; i++) {
      r = r.step(c(i)).evaluated(c(i), i);
      assertFalse(r.released().contains(BASE));
      r = r.pinnedNow();
    }
    assertEquals(List.of(BASE, c(5)), r.held());
  }

  @Test
  void keepLastBelowOneIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Retention.start("run", 0, BASE));
  }

  @Test
  void travelsThroughTemporalsPayloadsUnchanged() {
    // it is part of phase inputs, results and continue-as-new state
    Retention r = Retention.start("run/x", 2, BASE).pinnedNow().step(c(1)).phaseEnd(c(1));
    var converter = DefaultDataConverter.newDefaultInstance();
    Retention back = converter.fromPayload(converter.toPayload(r).orElseThrow(), Retention.class,
        Retention.class);
    assertEquals(r, back);
    var payload = converter.toPayload(r).orElseThrow().getData().toStringUtf8();
    assertFalse(payload.contains("held") || payload.contains("pinDue"), payload);
  }
}
