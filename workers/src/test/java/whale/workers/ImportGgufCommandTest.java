package whale.workers;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code whale import-gguf}'s command line: registered, its options checked, and an importer error
 * ends in one "whale: ..." line. (The import itself: whale.model.gguf.GgufImporterTest.)
 */
class ImportGgufCommandTest {
  @TempDir Path tmp;

  @Test
  void registeredWithItsOptions() {
    String help = HfCliTest.ok("import-gguf", "--help");
    assertTrue(help.contains("FILE.gguf") && help.contains("--out") && help.contains("--dtype")
        && help.contains("--force"), help);
  }

  @Test
  void badArgumentsAndFilesAreRefusedInOneLine() throws Exception {
    Path notGguf = Files.writeString(tmp.resolve("model.gguf"), "not a gguf at all");
    Path out = tmp.resolve("out");
    String err = HfCliTest.fails("import-gguf", notGguf.toString(), "--out", out.toString());
    assertTrue(err.startsWith("whale: ") && err.contains("not a GGUF file"), err);
    assertFalse(Files.exists(out));

    err = HfCliTest.fails("import-gguf", tmp.resolve("absent.gguf").toString(), "--out", out.toString());
    assertTrue(err.contains("absent.gguf: no such file"), err);

    err = HfCliTest.fails("import-gguf", notGguf.toString(), "--out", out.toString(), "--dtype", "bfloat16");
    assertTrue(err.contains("--dtype: float32 or float16, not \"bfloat16\""), err);

    Files.createDirectories(out);
    err = HfCliTest.fails("import-gguf", notGguf.toString(), "--out", out.toString());
    assertTrue(err.contains("already exists (pass --force to replace it)"), err);
  }
}
