package whale.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The dequantizer against gguf-py's {@code dequantize}, bit for bit, on every supported type. */
class DequantizerTest {
  @TempDir Path tmp;

  @Test
  void everySupportedTypeMatchesGgufPyBitForBit() {
    Set<GgmlType> seen = EnumSet.noneOf(GgmlType.class);
    for (JsonNode c : GgufFixtures.golden().path("dequant")) {
      GgmlType type = GgmlType.valueOf(c.path("type").asText());
      float[] expected = GgufFixtures.floats(GgufFixtures.base64(c.path("values")));
      float[] ours = new float[c.path("n").asInt()];
      Dequantizer.dequantize(type, ByteBuffer.wrap(GgufFixtures.base64(c.path("bytes"))), ours);
      assertBitsEqual(expected, ours, type.toString());
      seen.add(type);
    }
    assertEquals(Dequantizer.SUPPORTED, seen, "golden.json covers every supported type");
  }

  /** The same bytes as tensors of a GGUF (one row, and several rows), read back through GgufFile. */
  @Test
  void throughAGgufFileAsOneRowAndAsRows() throws IOException {
    GgufFixtures.Writer w = new GgufFixtures.Writer();
    w.alignment = 64;
    w.kv(GgufFile.ALIGNMENT_KEY, GgufFile.ValueType.UINT32, 64);
    for (JsonNode c : GgufFixtures.golden().path("dequant")) {
      GgmlType type = GgmlType.valueOf(c.path("type").asText());
      int n = c.path("n").asInt();
      byte[] bytes = GgufFixtures.base64(c.path("bytes"));
      w.tensor(type + ".row", new long[] {n}, type.id, bytes);
      int cols = Math.max(type.blockSize, 32);
      w.tensor(type + ".matrix", new long[] {cols, n / cols}, type.id, bytes);
    }
    try (GgufFile f = GgufFile.open(w.write(tmp.resolve("types.gguf")))) {
      for (JsonNode c : GgufFixtures.golden().path("dequant")) {
        float[] expected = GgufFixtures.floats(GgufFixtures.base64(c.path("values")));
        for (String kind : new String[] {".row", ".matrix"}) {
          GgufFile.Tensor t = f.tensor(c.path("type").asText() + kind);
          assertEquals(0, (t.offset() - f.tensors().values().iterator().next().offset()) % 64);
          assertBitsEqual(expected, Dequantizer.read(f, t), t.name());
        }
      }
    }
  }

  @Test
  void unsupportedTypeIsNamedWithTheTensor() throws IOException {
    GgufFixtures.Writer w = new GgufFixtures.Writer()
        .tensor("blk.3.ffn_up.weight", new long[] {256, 2}, GgmlType.IQ2_XXS.id, new byte[2 * 66]);
    try (GgufFile f = GgufFile.open(w.write(tmp.resolve("iq.gguf")))) {
      GgufFile.Tensor t = f.tensor("blk.3.ffn_up.weight");
      String msg = assertThrows(IOException.class, () -> Dequantizer.read(f, t)).getMessage();
      assertTrue(msg.contains("blk.3.ffn_up.weight") && msg.contains("IQ2_XXS")
          && msg.contains("cannot dequantize"), msg);
    }
  }

  private static void assertBitsEqual(float[] expected, float[] ours, String what) {
    assertEquals(expected.length, ours.length, what);
    int differ = 0;
    int first = -1;
    for (int i = 0; i < ours.length; i++) {
      if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(ours[i])) {
        differ++;
        first = first < 0 ? i : first;
      }
    }
    assertEquals(0, differ, what + ": " + differ + " of " + ours.length + " values differ, first at "
        + first + (first < 0 ? "" : ": " + ours[first] + " vs gguf-py " + expected[first]));
  }
}
