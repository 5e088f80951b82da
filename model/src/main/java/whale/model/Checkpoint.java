package whale.model;

import ai.djl.ndarray.types.Shape;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The one-file checkpoint: everything needed to continue training exactly where it stopped.
 *
 * <pre>
 * "WHALEGPT" magic (8 bytes), int version
 * config: vocabSize, contextLength, dModel, layers, heads, mlpRatio (ints)
 * int parameter count, then per parameter: UTF name, int rank, long dims..., float data
 * long AdamW step, then per parameter (same order): float m data, float v data
 * long CRC32 of every byte before it
 * </pre>
 *
 * Big-endian throughout (DataOutputStream). Written to a temporary file in the target directory,
 * fsynced, then renamed over the target with ATOMIC_MOVE, so a reader sees the old file or the new
 * one, never half of one.
 */
final class Checkpoint {
  private static final byte[] MAGIC = "WHALEGPT".getBytes(StandardCharsets.US_ASCII);
  private static final int VERSION = 1;

  final ModelConfig config;
  final Map<String, float[]> params;
  final long step;
  final Map<String, float[]> m;
  final Map<String, float[]> v;

  Checkpoint(
      ModelConfig config,
      Map<String, float[]> params,
      long step,
      Map<String, float[]> m,
      Map<String, float[]> v) {
    this.config = config;
    this.params = params;
    this.step = step;
    this.m = m;
    this.v = v;
  }

  void write(Path file) throws IOException {
    Path target = file.toAbsolutePath();
    Path dir = target.getParent();
    Files.createDirectories(dir);
    Path tmp = Files.createTempFile(dir, target.getFileName().toString() + ".", ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        CheckedOutputStream crc =
            new CheckedOutputStream(
                new BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16), new CRC32());
        DataOutputStream out = new DataOutputStream(crc);
        out.write(MAGIC);
        out.writeInt(VERSION);
        for (int x :
            new int[] {
              config.vocabSize(), config.contextLength(), config.dModel(),
              config.layers(), config.heads(), config.mlpRatio()
            }) {
          out.writeInt(x);
        }
        Map<String, Shape> shapes = TinyGpt.shapes(config);
        out.writeInt(shapes.size());
        for (Map.Entry<String, Shape> e : shapes.entrySet()) {
          out.writeUTF(e.getKey());
          out.writeInt(e.getValue().dimension());
          for (long dim : e.getValue().getShape()) {
            out.writeLong(dim);
          }
          writeFloats(out, params.get(e.getKey()));
        }
        out.writeLong(step);
        for (String name : shapes.keySet()) {
          writeFloats(out, m.get(name));
          writeFloats(out, v.get(name));
        }
        out.flush();
        out.writeLong(crc.getChecksum().getValue());
        out.flush();
        ch.force(true); // data on disk before the rename makes it visible
      }
      Files.move(
          tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tmp);
      throw e;
    }
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true); // persist the rename itself; best effort, not every filesystem allows it
    } catch (IOException ignored) {
      // directory fsync is unsupported on some platforms; the file itself is already durable
    }
  }

  static Checkpoint read(Path file) throws IOException {
    long fileSize = Files.size(file);
    try (CheckedInputStream crc =
            new CheckedInputStream(
                new BufferedInputStream(Files.newInputStream(file), 1 << 16), new CRC32());
        DataInputStream in = new DataInputStream(crc)) {
      byte[] magic = in.readNBytes(MAGIC.length);
      if (!Arrays.equals(magic, MAGIC)) {
        throw new IOException(file + ": not a whale model checkpoint (bad magic)");
      }
      int version = in.readInt();
      if (version != VERSION) {
        throw new IOException(file + ": unsupported checkpoint version " + version);
      }
      ModelConfig config;
      try {
        config =
            new ModelConfig(
                in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt());
      } catch (IllegalArgumentException e) {
        throw new IOException(file + ": corrupt checkpoint config: " + e.getMessage(), e);
      }
      Map<String, Shape> shapes = TinyGpt.shapes(config);
      int count = in.readInt();
      if (count != shapes.size()) {
        throw new IOException(
            file + ": corrupt checkpoint: " + count + " parameters, expected " + shapes.size());
      }
      Map<String, float[]> params = new LinkedHashMap<>();
      for (Map.Entry<String, Shape> e : shapes.entrySet()) {
        String name = in.readUTF();
        int rank = in.readInt();
        if (!name.equals(e.getKey()) || rank != e.getValue().dimension()) {
          throw new IOException(
              file + ": corrupt checkpoint: found parameter " + name + ", expected " + e.getKey());
        }
        long[] dims = new long[rank];
        for (int i = 0; i < rank; i++) {
          dims[i] = in.readLong();
        }
        if (!new Shape(dims).equals(e.getValue())) {
          throw new IOException(file + ": corrupt checkpoint: bad shape for " + name);
        }
        params.put(name, readFloats(in, fileSize, file));
      }
      long step = in.readLong();
      Map<String, float[]> m = new LinkedHashMap<>();
      Map<String, float[]> v = new LinkedHashMap<>();
      for (Map.Entry<String, Shape> e : shapes.entrySet()) {
        m.put(e.getKey(), readFloats(in, fileSize, file));
        v.put(e.getKey(), readFloats(in, fileSize, file));
        long size = e.getValue().size();
        if (params.get(e.getKey()).length != size
            || m.get(e.getKey()).length != size
            || v.get(e.getKey()).length != size) {
          throw new IOException(file + ": corrupt checkpoint: bad size for " + e.getKey());
        }
      }
      long computed = crc.getChecksum().getValue();
      long stored = in.readLong();
      if (computed != stored) {
        throw new IOException(file + ": corrupt checkpoint (checksum mismatch)");
      }
      if (in.read() != -1) {
        throw new IOException(file + ": corrupt checkpoint (trailing bytes)");
      }
      return new Checkpoint(config, params, step, m, v);
    } catch (EOFException e) {
      throw new IOException(file + ": truncated checkpoint", e);
    }
  }

  private static void writeFloats(DataOutputStream out, float[] data) throws IOException {
    out.writeInt(data.length);
    ByteBuffer buf = ByteBuffer.allocate(data.length * Float.BYTES).order(ByteOrder.BIG_ENDIAN);
    buf.asFloatBuffer().put(data);
    out.write(buf.array());
  }

  private static float[] readFloats(DataInputStream in, long fileSize, Path file)
      throws IOException {
    int n = in.readInt();
    if (n < 0 || (long) n * Float.BYTES > fileSize) {
      throw new IOException(file + ": corrupt checkpoint (array length " + n + ")");
    }
    byte[] bytes = new byte[n * Float.BYTES];
    in.readFully(bytes);
    float[] out = new float[n];
    ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN).asFloatBuffer().get(out);
    return out;
  }
}
