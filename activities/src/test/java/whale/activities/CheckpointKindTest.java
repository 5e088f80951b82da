package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.model.LanguageModel;
import whale.model.ModelConfig;

/** A checkpoint says what it is by its first bytes. */
class CheckpointKindTest {
  @TempDir Path dir;

  @Test
  void eachFormatIsRecognisedAndAnythingElseIsRefusedByName() throws Exception {
    Path builtin = dir.resolve("builtin.ckpt");
    try (LanguageModel m = LanguageModel.create(new ModelConfig(97, 16, 8, 1, 2, 2), 1)) {
      m.save(builtin);
    }
    assertEquals(CheckpointKind.BUILTIN, CheckpointKind.of(builtin));

    Path base = Files.writeString(dir.resolve("base.json"), "{\"format\":\"whale-hf-base/1\"}");
    assertEquals(CheckpointKind.HF_BASE, CheckpointKind.of(base));

    Path step = dir.resolve("step.zip");
    try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(step))) {
      z.putNextEntry(new ZipEntry("adapter_config.json"));
      z.write("{}".getBytes());
    }
    assertEquals(CheckpointKind.HF_STEP, CheckpointKind.of(step));
    assertTrue(CheckpointKind.HF_STEP.huggingFace() && !CheckpointKind.BUILTIN.huggingFace());

    Path other = Files.writeString(dir.resolve("notes.txt"), "hello");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointKind.of(other));
    assertTrue(e.getMessage().startsWith(other + " is not a whale checkpoint"), e.getMessage());
  }
}
