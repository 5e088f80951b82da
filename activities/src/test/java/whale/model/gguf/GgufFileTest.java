package whale.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.model.gguf.GgufFile.ValueType;
import whale.model.gguf.GgufFixtures.Arr;

/** The GGUF reader: every metadata type, tensor infos and data, alignment, and broken files. */
class GgufFileTest {
  @TempDir Path tmp;

  private static GgufFixtures.Writer everyType() {
    return new GgufFixtures.Writer()
        .kv("u8", ValueType.UINT8, 250)
        .kv("i8", ValueType.INT8, -5)
        .kv("u16", ValueType.UINT16, 65000)
        .kv("i16", ValueType.INT16, -300)
        .kv("u32", ValueType.UINT32, 4_000_000_000L)
        .kv("i32", ValueType.INT32, -70000)
        .kv("f32", ValueType.FLOAT32, 1e-5f)
        .kv("bool", ValueType.BOOL, true)
        .kv("str", ValueType.STRING, "Café 東京 🙂")
        .kv("u64", ValueType.UINT64, 1L << 40)
        .kv("i64", ValueType.INT64, -(1L << 40))
        .kv("f64", ValueType.FLOAT64, 0.1)
        .kv("arr.i32", ValueType.ARRAY, new Arr(ValueType.INT32, List.of(1L, -2L, 3L)))
        .kv("arr.str", ValueType.ARRAY, new Arr(ValueType.STRING, List.of("a b", "", "Ġthe")))
        .kv("arr.empty", ValueType.ARRAY, new Arr(ValueType.FLOAT32, List.of()))
        .kv("arr.nested", ValueType.ARRAY, new Arr(ValueType.ARRAY, List.of(
            new Arr(ValueType.UINT8, List.of(1L, 2L)), new Arr(ValueType.UINT8, List.of()))));
  }

  @Test
  void readsEveryMetadataTypeInVersions2And3() throws IOException {
    for (int version : new int[] {2, 3}) {
      GgufFixtures.Writer w = everyType();
      w.version = version;
      try (GgufFile f = GgufFile.open(w.write(tmp.resolve("v" + version + ".gguf")))) {
        assertEquals(version, f.version());
        assertEquals(250, f.integer("u8"));
        assertEquals(-5, f.integer("i8"));
        assertEquals(65000, f.integer("u16"));
        assertEquals(-300, f.integer("i16"));
        assertEquals(4_000_000_000L, f.integer("u32"));
        assertEquals(-70000, f.integer("i32"));
        assertEquals(1e-5f, (Float) f.metadata().get("f32"));
        assertEquals(1e-5, f.number("f32"), 0.0, "a float32 reads as its shortest decimal");
        assertTrue(f.bool("bool", false));
        assertEquals("Café 東京 🙂", f.string("str"));
        assertEquals(1L << 40, f.integer("u64"));
        assertEquals(-(1L << 40), f.integer("i64"));
        assertEquals(0.1, f.number("f64"), 0.0);
        assertEquals(List.of(1L, -2L, 3L), f.array("arr.i32", Long.class));
        assertEquals(List.of("a b", "", "Ġthe"), f.array("arr.str", String.class));
        assertEquals(List.of(), f.metadata().get("arr.empty"));
        assertEquals(List.of(List.of(1L, 2L), List.of()), f.metadata().get("arr.nested"));
        assertEquals(List.of("u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "u64", "i64",
            "f64", "arr.i32", "arr.str", "arr.empty", "arr.nested"), List.copyOf(f.metadata().keySet()));
      }
    }
  }

  @Test
  void typedAccessorsNameTheKey() throws IOException {
    try (GgufFile f = GgufFile.open(everyType().write(tmp.resolve("t.gguf")))) {
      assertMessage(() -> f.string("nope"), "metadata key nope is missing");
      assertMessage(() -> f.string("u32"), "metadata key u32 should be a string");
      assertMessage(() -> f.integer("str"), "metadata key str should be an integer");
      assertMessage(() -> f.array("arr.i32", String.class), "arr.i32 should be an array of String");
      assertEquals(7, f.integer("nope", 7));
    }
  }

  @Test
  void tensorInfosShapesAndData() throws IOException {
    float[] a = {1, 2, 3, 4, 5, 6};
    GgufFixtures.Writer w = new GgufFixtures.Writer()
        .kv(GgufFile.ALIGNMENT_KEY, ValueType.UINT32, 128)
        .tensor("a", new long[] {3, 2}, GgmlType.F32.id, GgufFixtures.Writer.f32(a))
        .tensor("b", new long[] {5}, GgmlType.F32.id, GgufFixtures.Writer.f32(new float[] {9, 8, 7, 6, 5}));
    w.alignment = 128;
    try (GgufFile f = GgufFile.open(w.write(tmp.resolve("t.gguf")))) {
      GgufFile.Tensor ta = f.tensor("a");
      assertArrayEquals(new long[] {3, 2}, ta.ne());
      assertArrayEquals(new long[] {2, 3}, ta.shape(), "ne is innermost first: [cols, rows]");
      assertEquals(0, ta.offset() % 128);
      assertEquals(128, f.tensor("b").offset() - ta.offset(), "each tensor starts at the alignment");
      assertArrayEquals(a, Dequantizer.read(f, ta));
      assertArrayEquals(new float[] {9, 8, 7, 6, 5}, Dequantizer.read(f, f.tensor("b")));
      assertEquals(List.of("a", "b"), List.copyOf(f.tensors().keySet()));
    }
  }

  @Test
  void brokenFilesAreRefusedSayingWhy() throws IOException {
    byte[] good = GgufFixtures.tinyLlama(true, "smollm").bytes();
    Path file = tmp.resolve("x.gguf");

    Files.write(file, "GGML and more bytes".getBytes());
    assertOpenFails(file, "not a GGUF file");

    byte[] v1 = good.clone();
    v1[4] = 1;
    Files.write(file, v1);
    assertOpenFails(file, "GGUF version 1 is not supported");

    byte[] bigEndian = good.clone();
    bigEndian[4] = 0;
    bigEndian[7] = 3;
    Files.write(file, bigEndian);
    assertOpenFails(file, "big-endian");

    Files.write(file, Arrays.copyOf(good, 300)); // inside the metadata
    assertOpenFails(file, "truncated: the header ends inside metadata");

    Files.write(file, Arrays.copyOf(good, good.length - 100)); // inside the last tensor
    assertOpenFails(file, "truncated: tensor output_norm.weight needs bytes");

    GgufFixtures.Writer badType = new GgufFixtures.Writer()
        .tensor("w", new long[] {4}, 99, new byte[16]);
    assertOpenFails(badType.write(file), "tensor w has ggml type 99, which whale does not know");

    GgufFixtures.Writer badRow = new GgufFixtures.Writer()
        .tensor("w", new long[] {48, 2}, GgmlType.Q4_0.id, new byte[2 * 18 * 3 / 2 * 2]);
    assertOpenFails(badRow.write(file), "rows of 48 values, not a multiple of its block size 32");

    GgufFixtures.Writer badAlign = new GgufFixtures.Writer()
        .kv(GgufFile.ALIGNMENT_KEY, ValueType.UINT32, 24);
    assertOpenFails(badAlign.write(file), "general.alignment = 24: must be a positive power of two");
  }

  private void assertOpenFails(Path file, String expected) {
    assertMessage(() -> GgufFile.open(file).close(), expected);
  }

  private static void assertMessage(org.junit.jupiter.api.function.Executable e, String expected) {
    String msg = assertThrows(IOException.class, e).getMessage();
    assertTrue(msg.contains(expected), "expected \"" + expected + "\" in: " + msg);
  }
}
