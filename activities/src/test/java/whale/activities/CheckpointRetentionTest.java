package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.store.ArtifactStore;
import whale.store.Pins;
import whale.workflows.activities.RetainRequest;
import whale.workflows.activities.RetainResult;

/** The retention activity on a store shared by two runs: pins protect, retries change nothing. */
class CheckpointRetentionTest {
  @TempDir Path dir;

  @Test
  void deletesOnlyWhatNoRunPinsAndTheUnpackedCopyWithIt() throws Exception {
    ActivityRuntime runtime = ActivityRuntime.open(dir, ActivityRuntime.Mode.IN_PROCESS);
    ArtifactStore store = runtime.store();
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    String base = store.putString("base");
    String a1 = store.putString("checkpoint a1");
    String shared = store.putString("checkpoint both runs made"); // identical bytes in both runs
    String a3 = store.putString("checkpoint a3");
    // an unpacked Hugging Face copy of a1, and a half-unpacked leftover of it
    Path unpacked = store.root().resolve("hf").resolve(a1.substring(7));
    Files.createDirectories(unpacked);
    Files.writeString(unpacked.resolve("whale-checkpoint.json"), "{}");
    Path leftover = store.root().resolve("hf").resolve(a1.substring(7) + ".tmp-42");
    Files.createDirectories(leftover);

    weights.retainCheckpoints(new RetainRequest("run-a", List.of(base, a1, shared), List.of()));
    weights.retainCheckpoints(new RetainRequest("run-b", List.of(base, shared), List.of()));

    // run a moves on: releases a1 and the shared checkpoint, which run b still holds
    RetainResult r = weights.retainCheckpoints(
        new RetainRequest("run-a", List.of(base, a3), List.of(a1, shared)));
    assertEquals(List.of(a1), r.deleted());
    assertEquals(List.of(shared), r.pinnedElsewhere());
    assertEquals("checkpoint a1".length(), r.bytesFreed());
    assertFalse(store.intact(a1));
    assertFalse(Files.exists(unpacked), "the unpacked copy goes with its object");
    assertFalse(Files.exists(leftover));
    assertTrue(store.intact(shared), "run b's pin keeps it");
    assertTrue(store.intact(base));
    assertEquals(List.of(base, a3).stream().sorted().toList(), new Pins(store).held("run-a"));

    // a retry (lost completion) finds the same pin and nothing left to delete
    RetainResult again = weights.retainCheckpoints(
        new RetainRequest("run-a", List.of(base, a3), List.of(a1, shared)));
    assertEquals(List.of(), again.deleted());
    assertEquals(0, again.bytesFreed());

    // run b releases the shared checkpoint: now no pin holds it; the base both pin stays
    RetainResult b = weights.retainCheckpoints(
        new RetainRequest("run-b", List.of(base), List.of(shared)));
    assertEquals(List.of(shared), b.deleted());
    assertFalse(store.intact(shared));
    assertTrue(store.intact(base));
    assertTrue(store.intact(a3));
  }

  @Test
  void aStepsFreshCheckpointIsHeldForItsWorkflowUntilItsRetentionCallTakesOver() {
    ArtifactStore store = ActivityRuntime.open(dir, ActivityRuntime.Mode.IN_PROCESS).store();
    Pins pins = new Pins(store);
    String base = store.putString("base");
    String fresh = store.putString("a checkpoint both runs made");
    pins.retain("run-a", null, List.of(base, fresh), List.of(), ref -> { });
    // run b's step returned the same bytes; its phase child holds them before run b pins them
    assertTrue(pins.hold("run-b/r1-weight", fresh));
    Pins.Outcome a = pins.retain("run-a", null, List.of(base), List.of(fresh), ref -> { });
    assertEquals(List.of(fresh), a.pinnedElsewhere());
    assertTrue(store.intact(fresh));
    // run b's retention call (from that child) pins it for the run and drops the child's hold
    pins.retain("run-b", "run-b/r1-weight", List.of(base, fresh), List.of(), ref -> { });
    assertEquals(List.of(), pins.held("run-b/r1-weight"));
    assertEquals(List.of(base, fresh).stream().sorted().toList(), pins.held("run-b"));
    Pins.Outcome b = pins.retain("run-b", null, List.of(base), List.of(fresh), ref -> { });
    assertEquals(List.of(fresh), b.deleted());
    // a hold on what is gone says so: the step must make it again
    assertFalse(pins.hold("run-c/r1-weight", fresh));
  }

  @Test
  void aMemoizedStepWhoseCheckpointWasDeletedIsRecomputedNotHandedBack() {
    ActivityRuntime runtime = ActivityRuntime.open(dir, ActivityRuntime.Mode.IN_PROCESS);
    ArtifactStore store = runtime.store();
    int[] computed = {0};
    java.util.function.Supplier<String> work = () -> {
      computed[0]++;
      return store.putString("the step's checkpoint");
    };
    String ref = Memo.once(store, Memo.Kind.RSFT_STEP, "request", String.class, work);
    new WeightActivitiesImpl(runtime).retainCheckpoints(
        new RetainRequest("run", List.of(), List.of(ref)));
    assertFalse(store.intact(ref));
    assertEquals(ref, Memo.once(store, Memo.Kind.RSFT_STEP, "request", String.class, work));
    assertEquals(2, computed[0], "the memo named a deleted checkpoint: the work ran again");
    assertTrue(store.intact(ref));
  }
}
