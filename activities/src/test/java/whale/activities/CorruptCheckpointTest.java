package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.store.ArtifactStore;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.TaskRef;

/** A base checkpoint with a flipped byte, through the real activity and its memo. */
class CorruptCheckpointTest {
  @TempDir Path dir;

  @Test
  void aFlippedByteInACheckpointIsRefusedAndTheMemoRecomputesIt() throws Exception {
    ActivityRuntime runtime = ActivityRuntime.open(dir.resolve("store"));
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    BaseModelRequest req = new BaseModelRequest(new TaskRef("math", 1234, 32, 8, 8),
        ExperimentSpec.ModelSpec.builtin(64, 16, 1, 2, 10, 8, 0.008, 200), 7);
    String base = weights.prepareBaseModel(req);
    runtime.loadForTraining(base).close();

    Path file = runtime.store().path(base);
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length / 2] ^= 0x01;
    Files.write(file, bytes);
    ArtifactStore.CorruptArtifactException e = assertThrows(ArtifactStore.CorruptArtifactException.class,
        () -> runtime.loadForTraining(base));
    assertEquals(base, e.ref());
    assertTrue(e.getMessage().startsWith("artifact " + base + " is corrupt"), e.getMessage());

    // the memo names the corrupt checkpoint: pretraining runs again instead of returning it
    String again = weights.prepareBaseModel(req);
    // (a trusted memo would hand back the corrupt reference, which is no longer in the store)
    assertTrue(runtime.store().intact(again), again);
    runtime.loadForTraining(again).close();
  }
}
