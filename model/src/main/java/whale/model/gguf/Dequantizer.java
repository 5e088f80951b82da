package whale.model.gguf;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.Set;
import whale.model.hf.Safetensors;

/**
 * ggml tensor data to float32, block by block, in ggml's layouts (ggml-common.h; the reference is
 * gguf-py's {@code quants.py}). Each value is computed with the same float32 operations in the same
 * order as gguf-py's {@code dequantize} ((d * q) - m, never fused), so the results agree bit for
 * bit; the tests hold it to that.
 *
 * <p>Common to the formats: {@code d}, {@code dmin}, {@code m} are float16 scales; in the 32-value
 * formats the low nibbles of the 16 packed bytes are values 0-15 and the high nibbles values 16-31;
 * the K-quants are 256-value super-blocks of 16 or 8 sub-blocks, each with a small integer scale
 * (and min) multiplied by the super-block's float16 ones.
 */
public final class Dequantizer {
  public static final Set<GgmlType> SUPPORTED = EnumSet.of(GgmlType.F32, GgmlType.F16,
      GgmlType.BF16, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q8_0,
      GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K);

  private Dequantizer() {}

  /** A tensor of {@code file} as float32, in its own (row-major, ne reversed) order. */
  public static float[] read(GgufFile file, GgufFile.Tensor t) throws IOException {
    if (!SUPPORTED.contains(t.type())) {
      throw unsupported(file, t);
    }
    if (t.elements() > Integer.MAX_VALUE - 8) {
      throw new IOException(file.path() + ": tensor " + t.name() + " has " + t.elements()
          + " values, more than one Java array holds");
    }
    float[] out = new float[(int) t.elements()];
    dequantize(t.type(), file.data(t), out);
    return out;
  }

  /** The error for a tensor whose type is not in {@link #SUPPORTED}. */
  public static IOException unsupported(GgufFile file, GgufFile.Tensor t) {
    return new IOException(file.path() + ": tensor " + t.name() + " has type " + t.type()
        + ", which whale cannot dequantize (it reads " + SUPPORTED + ")");
  }

  /** Decodes {@code out.length} values of {@code type} from {@code src} (from its position 0). */
  public static void dequantize(GgmlType type, ByteBuffer src, float[] out) {
    ByteBuffer in = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int n = out.length;
    switch (type) {
      case F32:
        in.position(0);
        in.asFloatBuffer().get(out, 0, n);
        return;
      case F16:
        for (int i = 0; i < n; i++) {
          out[i] = Safetensors.halfToFloat(in.getShort(2 * i));
        }
        return;
      case BF16: // the top half of a float32
        for (int i = 0; i < n; i++) {
          out[i] = Float.intBitsToFloat((in.getShort(2 * i) & 0xffff) << 16);
        }
        return;
      default:
        break;
    }
    if (!SUPPORTED.contains(type)) {
      throw new IllegalArgumentException("whale cannot dequantize " + type);
    }
    byte[] q = new byte[type.typeSize];
    for (int block = 0, o = 0; o < n; block++, o += type.blockSize) {
      in.get(block * type.typeSize, q);
      switch (type) {
        case Q4_0: q4_0(q, out, o); break;
        case Q4_1: q4_1(q, out, o); break;
        case Q5_0: q5_0(q, out, o); break;
        case Q5_1: q5_1(q, out, o); break;
        case Q8_0: q8_0(q, out, o); break;
        case Q2_K: q2_k(q, out, o); break;
        case Q3_K: q3_k(q, out, o); break;
        case Q4_K: q4_k(q, out, o); break;
        case Q5_K: q5_k(q, out, o); break;
        default: q6_k(q, out, o); break;
      }
    }
  }

  private static float f16(byte[] q, int at) {
    return Safetensors.halfToFloat((short) ((q[at] & 0xff) | (q[at + 1] & 0xff) << 8));
  }

  private static int u8(byte[] q, int at) {
    return q[at] & 0xff;
  }

  /** d f16, 16 bytes of nibbles; value = d * (q - 8). */
  private static void q4_0(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    for (int j = 0; j < 16; j++) {
      out[o + j] = d * ((u8(q, 2 + j) & 0xf) - 8);
      out[o + j + 16] = d * ((u8(q, 2 + j) >> 4) - 8);
    }
  }

  /** d, m f16, 16 bytes of nibbles; value = d * q + m. */
  private static void q4_1(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    float m = f16(q, 2);
    for (int j = 0; j < 16; j++) {
      out[o + j] = d * (u8(q, 4 + j) & 0xf) + m;
      out[o + j + 16] = d * (u8(q, 4 + j) >> 4) + m;
    }
  }

  /** d f16, a u32 of fifth bits (bit j for value j), 16 bytes of nibbles; value = d * (q - 16). */
  private static void q5_0(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    int qh = u8(q, 2) | u8(q, 3) << 8 | u8(q, 4) << 16 | u8(q, 5) << 24;
    for (int j = 0; j < 16; j++) {
      out[o + j] = d * (((u8(q, 6 + j) & 0xf) | ((qh >>> j) & 1) << 4) - 16);
      out[o + j + 16] = d * (((u8(q, 6 + j) >> 4) | ((qh >>> (j + 16)) & 1) << 4) - 16);
    }
  }

  /** d, m f16, a u32 of fifth bits, 16 bytes of nibbles; value = d * q + m. */
  private static void q5_1(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    float m = f16(q, 2);
    int qh = u8(q, 4) | u8(q, 5) << 8 | u8(q, 6) << 16 | u8(q, 7) << 24;
    for (int j = 0; j < 16; j++) {
      out[o + j] = d * ((u8(q, 8 + j) & 0xf) | ((qh >>> j) & 1) << 4) + m;
      out[o + j + 16] = d * ((u8(q, 8 + j) >> 4) | ((qh >>> (j + 16)) & 1) << 4) + m;
    }
  }

  /** d f16, 32 signed bytes; value = q * d. */
  private static void q8_0(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    for (int j = 0; j < 32; j++) {
      out[o + j] = q[2 + j] * d;
    }
  }

  /**
   * 16 scale bytes (low nibble scale, high nibble min, one per 16 values), 64 bytes of 2-bit values,
   * d and dmin f16. Value e sits in byte 32*(e/128) + e%32 at bit 2*((e%128)/32).
   */
  private static void q2_k(byte[] q, float[] out, int o) {
    float d = f16(q, 80);
    float dmin = f16(q, 82);
    for (int sb = 0; sb < 16; sb++) {
      float dl = d * (u8(q, sb) & 0xf);
      float ml = dmin * (u8(q, sb) >> 4);
      for (int i = 0; i < 16; i++) {
        int e = sb * 16 + i;
        int v = (u8(q, 16 + (e / 128) * 32 + e % 32) >> (2 * ((e % 128) / 32))) & 3;
        out[o + e] = dl * v - ml;
      }
    }
  }

  /**
   * 32 bytes of high-bit masks (bit e/32 of byte e%32; a clear bit subtracts 4), 64 bytes of 2-bit
   * values laid out as Q2_K's, 12 bytes of 6-bit signed scales (offset 32), d f16.
   */
  private static void q3_k(byte[] q, float[] out, int o) {
    float d = f16(q, 108);
    for (int sb = 0; sb < 16; sb++) {
      int low = sb < 8 ? u8(q, 96 + sb) & 0xf : u8(q, 96 + sb - 8) >> 4;
      int high = (u8(q, 104 + sb % 4) >> (2 * (sb / 4))) & 3;
      float dl = d * ((low | high << 4) - 32);
      for (int i = 0; i < 16; i++) {
        int e = sb * 16 + i;
        int v = (u8(q, 32 + (e / 128) * 32 + e % 32) >> (2 * ((e % 128) / 32))) & 3;
        int hbit = (u8(q, e % 32) >> (e / 32)) & 1;
        out[o + e] = dl * (v - (hbit == 0 ? 4 : 0));
      }
    }
  }

  /**
   * The 6-bit scale and min of sub-block {@code j} (0-7) from the 12 packed bytes at {@code at}:
   * sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); 4-7 in the nibbles of
   * bytes 8-11 with their top 2 bits in the top bits of bytes 0-7.
   */
  private static int scale(byte[] q, int at, int j) {
    return j < 4 ? u8(q, at + j) & 63 : (u8(q, at + j + 4) & 0xf) | (u8(q, at + j - 4) >> 6) << 4;
  }

  private static int min(byte[] q, int at, int j) {
    return j < 4 ? u8(q, at + j + 4) & 63 : (u8(q, at + j + 4) >> 4) | (u8(q, at + j) >> 6) << 4;
  }

  /**
   * d, dmin f16, 12 scale bytes, 128 bytes of nibbles: sub-block sb (32 values) is the low
   * (sb even) or high nibbles of bytes 32*(sb/2)...; value = (d * scale) * q - dmin * min.
   */
  private static void q4_k(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    float dmin = f16(q, 2);
    for (int sb = 0; sb < 8; sb++) {
      float ds = d * scale(q, 4, sb);
      float dm = dmin * min(q, 4, sb);
      for (int j = 0; j < 32; j++) {
        int v = (u8(q, 16 + (sb / 2) * 32 + j) >> (4 * (sb % 2))) & 0xf;
        out[o + sb * 32 + j] = ds * v - dm;
      }
    }
  }

  /** Q4_K plus 32 bytes of fifth bits (bit sb of byte j) before the nibbles. */
  private static void q5_k(byte[] q, float[] out, int o) {
    float d = f16(q, 0);
    float dmin = f16(q, 2);
    for (int sb = 0; sb < 8; sb++) {
      float ds = d * scale(q, 4, sb);
      float dm = dmin * min(q, 4, sb);
      for (int j = 0; j < 32; j++) {
        int v = (u8(q, 48 + (sb / 2) * 32 + j) >> (4 * (sb % 2))) & 0xf;
        v |= ((u8(q, 16 + j) >> sb) & 1) << 4;
        out[o + sb * 32 + j] = ds * v - dm;
      }
    }
  }

  /**
   * 128 bytes of low nibbles, 64 bytes of 2-bit highs, 16 signed scales (one per 16 values), d f16.
   * In each half h of 128 values, value i takes the low/high nibble (i/64) of byte 64h + i%64 and
   * bits 2*(i/32) of byte 128 + 32h + i%32; value = (d * scale) * (q - 32).
   */
  private static void q6_k(byte[] q, float[] out, int o) {
    float d = f16(q, 208);
    for (int e = 0; e < 256; e++) {
      int h = e / 128;
      int i = e % 128;
      int low = (u8(q, 64 * h + i % 64) >> (4 * (i / 64))) & 0xf;
      int high = (u8(q, 128 + 32 * h + i % 32) >> (2 * (i / 32))) & 3;
      out[o + e] = (d * q[192 + e / 16]) * ((low | high << 4) - 32);
    }
  }
}
