package whale.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ArtifactStoreTest {
  @TempDir Path dir;

  @Test
  void sameBytesGiveTheSameReferenceAndDifferentBytesDiffer() {
    ArtifactStore s = new ArtifactStore(dir);
    String a = s.putString("hello");
    String b = s.putString("hello");
    String c = s.putString("hello!");
    assertEquals(a, b);
    assertNotEquals(a, c);
    // sha256("hello"), so references are checkable by anyone
    assertEquals("sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", a);
    assertEquals("hello", s.getString(a));
  }

  @Test
  void putFileMovesTheFileAndLeavesNoTemporaries() throws Exception {
    ArtifactStore s = new ArtifactStore(dir);
    Path tmp = s.newTempFile(".bin");
    byte[] data = new byte[100_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31);
    }
    Files.write(tmp, data);
    String ref = s.putFile(tmp);
    assertFalse(Files.exists(tmp));
    assertArrayEquals(data, s.getBytes(ref));
    try (var files = Files.list(dir.resolve("tmp"))) {
      assertEquals(0, files.count());
    }
    // the same content again: the duplicate temp file is removed, the reference is the same
    Path again = s.newTempFile(".bin");
    Files.write(again, data);
    assertEquals(ref, s.putFile(again));
    assertFalse(Files.exists(again));
  }

  @Test
  void concurrentWritersOfTheSameContentAgree() throws Exception {
    ArtifactStore s = new ArtifactStore(dir);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<String>> refs = new java.util.ArrayList<>();
      for (int i = 0; i < 16; i++) {
        refs.add(pool.submit(() -> s.putString("same content")));
      }
      String first = refs.get(0).get();
      for (Future<String> f : refs) {
        assertEquals(first, f.get());
      }
      assertEquals("same content", s.getString(first));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void malformedAndMissingReferencesFailClearly() {
    ArtifactStore s = new ArtifactStore(dir);
    var bad = assertThrows(IllegalArgumentException.class, () -> s.path("../../etc/passwd"));
    assertTrue(bad.getMessage().contains("not an artifact reference"), bad.getMessage());
    String missing = "sha256:" + "0".repeat(64);
    var gone = assertThrows(IllegalArgumentException.class, () -> s.path(missing));
    assertTrue(gone.getMessage().contains("is not in the store"), gone.getMessage());
  }

  @Test
  void jsonRoundTrip() {
    ArtifactStore s = new ArtifactStore(dir);
    record Point(int x, String label) {}
    String ref = s.putJson(new Point(3, "a"));
    assertEquals(new Point(3, "a"), s.getJson(ref, Point.class));
    assertEquals(Map.of("x", 3, "label", "a"), s.getJson(ref, Map.class));
  }

  @Test
  void memosRememberFinishedWorkAcrossStoreInstances() {
    String key = ArtifactStore.sha256Hex("request");
    new ArtifactStore(dir).putMemo("rsft", key, "result-1");
    // a new process (a restarted worker) sees it
    assertEquals("result-1", new ArtifactStore(dir).memo("rsft", key).orElseThrow());
    assertTrue(new ArtifactStore(dir).memo("rsft", ArtifactStore.sha256Hex("other")).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> new ArtifactStore(dir).memo("rsft", "../x"));
  }

  @Test
  void namedDirectoriesRejectEscapes() {
    ArtifactStore s = new ArtifactStore(dir);
    assertTrue(Files.isDirectory(s.namedDir("archives/run-1/round-1")));
    assertThrows(IllegalArgumentException.class, () -> s.namedDir("../outside"));
    assertThrows(IllegalArgumentException.class, () -> s.namedDir("/abs"));
  }

  @Test
  void aFlippedByteOrATruncationIsDetectedOnReadAndRewritingRepairs() throws Exception {
    ArtifactStore s = new ArtifactStore(dir);
    byte[] data = new byte[3_000_000]; // big enough that path() streams it
    new java.util.Random(5).nextBytes(data);
    String ref = s.putBytes(data);
    Path file = s.path(ref);
    assertArrayEquals(data, Files.readAllBytes(file));

    // a checkpoint with one flipped byte: path() (what checkpoint loading uses) refuses it
    byte[] flipped = data.clone();
    flipped[1_234_567] ^= 0x10;
    Files.write(file, flipped);
    ArtifactStore.CorruptArtifactException e =
        assertThrows(ArtifactStore.CorruptArtifactException.class, () -> s.path(ref));
    assertEquals(ref, e.ref());
    assertTrue(e.getMessage().startsWith("artifact " + ref + " is corrupt: its 3000000 bytes hash to sha256:"),
        e.getMessage());
    assertFalse(Files.exists(file), "moved aside");
    IllegalArgumentException gone = assertThrows(IllegalArgumentException.class, () -> s.getBytes(ref));
    assertTrue(gone.getMessage().contains(ref) && gone.getMessage().contains("corrupt copy"), gone.getMessage());
    assertFalse(s.intact(ref));

    // writing the same content again restores it
    assertEquals(ref, s.putBytes(data));
    assertArrayEquals(data, s.getBytes(ref));
    assertTrue(s.intact(ref));

    // a truncated rollout file: getBytes and getJson refuse it too, even in a fresh store instance
    String rollouts = s.putJson(List.of(Map.of("reward", 1.0, "text", "x".repeat(1000))));
    Path rf = s.path(rollouts);
    Files.write(rf, Arrays.copyOf(Files.readAllBytes(rf), 500));
    ArtifactStore fresh = new ArtifactStore(dir);
    e = assertThrows(ArtifactStore.CorruptArtifactException.class, () -> fresh.getJson(rollouts, List.class));
    assertTrue(e.getMessage().contains(rollouts + " is corrupt: its 500 bytes"), e.getMessage());

    // an existing object with wrong bytes is replaced, not trusted, when its content is stored again
    String hello = s.putString("hello");
    Files.writeString(s.path(hello), "jello");
    assertEquals(hello, s.putString("hello"));
    assertEquals("hello", s.getString(hello));
  }
}
