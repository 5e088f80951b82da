package whale.activities;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a checkpoint in the artifact store is, read from its own first bytes: each kind's format
 * begins differently, so a reference alone says which model loads it.
 */
enum CheckpointKind {
  /** The builtin model: {@code whale.model.Checkpoint}'s "WHALEGPT" header. */
  BUILTIN,
  /** A run's Hugging Face base: {@link HfPolicy.Base}, a JSON object naming the model directory. */
  HF_BASE,
  /** A Hugging Face RSFT step: a zip of a PEFT adapter or of full weights ({@link HfPolicy#save}). */
  HF_STEP;

  /** The kind of the checkpoint stored at {@code file}; an error naming the file for anything else. */
  static CheckpointKind of(Path file) {
    byte[] head;
    try (InputStream in = Files.newInputStream(file)) {
      head = in.readNBytes(8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read checkpoint " + file, e);
    }
    String start = new String(head, java.nio.charset.StandardCharsets.ISO_8859_1);
    if (start.equals("WHALEGPT")) {
      return BUILTIN;
    }
    if (start.startsWith("{")) {
      return HF_BASE;
    }
    if (start.startsWith("PK")) {
      return HF_STEP;
    }
    throw new IllegalArgumentException(file + " is not a whale checkpoint (it starts with neither the "
        + "builtin model's WHALEGPT header, a Hugging Face base descriptor nor a step's zip)");
  }

  /** A Hugging Face model's (base or step), loaded by {@link HfPolicy}. */
  boolean huggingFace() {
    return this != BUILTIN;
  }
}
