package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import whale.model.OwnedArrays;

/**
 * Reads safetensors checkpoints by memory-mapping, one tensor at a time, into float32: a single
 * {@code model.safetensors} or shards listed in {@code model.safetensors.index.json}. DJL's own
 * decoder is not used because it reads a whole file into one {@code byte[]} (2 GiB at most), knows
 * no shards, and BF16 arrays abort the JVM in its PyTorch engine; F16 and BF16 are widened here.
 *
 * <p>Every header is checked when the checkpoint is opened (dtype, shape against byte length,
 * offsets against the file's size), so a truncated or inconsistent file fails before any weight is
 * loaded, with the file and tensor named.
 */
public final class Safetensors {
  public static final String SINGLE = "model.safetensors";
  public static final String INDEX = "model.safetensors.index.json";
  /** Largest region mapped at once: a MappedByteBuffer is int-indexed. */
  private static final long MAP_CHUNK = 1L << 30;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Where one tensor's bytes are: absolute offsets into {@code file}. */
  public record Entry(String name, Path file, String dtype, long[] shape, long start, long end) {
    public long elements() {
      long n = 1;
      for (long d : shape) {
        n *= d;
      }
      return n;
    }
  }

  private final Map<String, Entry> entries;

  private Safetensors(Map<String, Entry> entries) {
    this.entries = entries;
  }

  /** The checkpoint in a model directory: the index if there is one, else {@code model.safetensors}. */
  public static Safetensors openDirectory(Path dir) throws IOException {
    Path index = dir.resolve(INDEX);
    if (Files.exists(index)) {
      return openIndex(index);
    }
    Path single = dir.resolve(SINGLE);
    if (!Files.exists(single)) {
      throw new IOException(dir + ": neither " + SINGLE + " nor " + INDEX + " exists");
    }
    return new Safetensors(readHeader(single));
  }

  /** One safetensors file on its own (an adapter, a single-file model). */
  public static Safetensors openFile(Path file) throws IOException {
    return new Safetensors(readHeader(file));
  }

  private static Safetensors openIndex(Path index) throws IOException {
    JsonNode map;
    try {
      map = JSON.readTree(index.toFile()).get("weight_map");
    } catch (IOException e) {
      throw new IOException(index + ": not valid JSON: " + e.getMessage(), e);
    }
    if (map == null || !map.isObject()) {
      throw new IOException(index + ": no \"weight_map\" object");
    }
    Map<String, Map<String, Entry>> shards = new LinkedHashMap<>();
    Map<String, Entry> entries = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String shard = e.getValue().asText();
      Path file = index.resolveSibling(shard);
      if (!shards.containsKey(shard)) {
        if (!Files.exists(file)) {
          throw new IOException(index + ": weight_map puts tensor " + e.getKey() + " in shard "
              + shard + ", but " + file + " does not exist");
        }
        shards.put(shard, readHeader(file));
      }
      Entry entry = shards.get(shard).get(e.getKey());
      if (entry == null) {
        throw new IOException(index + ": weight_map puts tensor " + e.getKey() + " in " + file
            + ", whose header has no such tensor");
      }
      entries.put(e.getKey(), entry);
    }
    return new Safetensors(entries);
  }

  /** Parses and checks one file's header; offsets in the result are absolute. */
  private static Map<String, Entry> readHeader(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size < 8) {
        throw new IOException(file + ": truncated: " + size + " bytes, not even the 8-byte header length");
      }
      ByteBuffer lenBuf = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      readFully(ch, lenBuf, 0);
      long headerLen = lenBuf.flip().getLong();
      if (headerLen <= 0 || headerLen > 100_000_000L || 8 + headerLen > size) {
        throw new IOException(file + ": truncated or not safetensors: header length " + headerLen
            + " but the file has " + size + " bytes");
      }
      ByteBuffer hb = ByteBuffer.allocate((int) headerLen);
      readFully(ch, hb, 8);
      JsonNode header;
      try {
        header = JSON.readTree(new String(hb.array(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new IOException(file + ": header is not valid JSON: " + e.getMessage(), e);
      }
      long base = 8 + headerLen;
      Map<String, Entry> out = new LinkedHashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        String name = e.getKey();
        if (name.equals("__metadata__")) {
          continue;
        }
        JsonNode t = e.getValue();
        String dtype = t.path("dtype").asText();
        int width = dtypeBytes(dtype);
        if (width < 0) {
          throw new IOException(file + ": tensor " + name + " has dtype " + dtype
              + "; whale reads F32, F16 and BF16");
        }
        JsonNode shapeNode = t.path("shape");
        long[] shape = new long[shapeNode.size()];
        for (int i = 0; i < shape.length; i++) {
          shape[i] = shapeNode.get(i).asLong();
        }
        long begin = t.path("data_offsets").path(0).asLong(-1);
        long end = t.path("data_offsets").path(1).asLong(-1);
        Entry entry = new Entry(name, file, dtype, shape, base + begin, base + end);
        if (begin < 0 || end < begin || end - begin != entry.elements() * width) {
          throw new IOException(file + ": tensor " + name + " has data_offsets [" + begin + ", "
              + end + "] but shape " + Arrays.toString(shape) + " of " + dtype + " needs "
              + entry.elements() * width + " bytes");
        }
        if (base + end > size) {
          throw new IOException(file + ": truncated: tensor " + name + " ends at byte "
              + (base + end) + " but the file has " + size + " bytes");
        }
        out.put(name, entry);
      }
      return out;
    }
  }

  private static void readFully(FileChannel ch, ByteBuffer buf, long pos) throws IOException {
    while (buf.hasRemaining()) {
      int n = ch.read(buf, pos + buf.position());
      if (n < 0) {
        throw new IOException("unexpected end of file");
      }
    }
  }

  private static int dtypeBytes(String dtype) {
    switch (dtype) {
      case "F32":
        return 4;
      case "F16":
      case "BF16":
        return 2;
      default:
        return -1;
    }
  }

  public Map<String, Entry> entries() {
    return Collections.unmodifiableMap(entries);
  }

  public boolean contains(String name) {
    return entries.containsKey(name);
  }

  /**
   * The tensor {@code name} as float32, checked against {@code expectedShape}; {@code owner} names
   * what expected it (for the message).
   */
  public float[] read(String name, long[] expectedShape, String owner) throws IOException {
    return read(check(name, expectedShape, owner));
  }

  /** The entry of tensor {@code name}, checked against {@code expectedShape}, without reading it. */
  public Entry check(String name, long[] expectedShape, String owner) throws IOException {
    Entry e = entries.get(name);
    if (e == null) {
      throw new IOException(owner + ": checkpoint has no tensor " + name);
    }
    if (!Arrays.equals(e.shape(), expectedShape)) {
      throw new IOException(e.file() + ": tensor " + name + " has shape " + Arrays.toString(e.shape())
          + " but " + owner + " implies " + Arrays.toString(expectedShape));
    }
    return e;
  }

  /**
   * As {@link #read(String, long[], String)}, as a float32 array of {@code manager} in libtorch's
   * own memory. An F32 tensor goes from the file into the array through a direct staging buffer,
   * never as a Java array: reading SmolLM2's 113 MB embedding and its two AdamW moments that way
   * grew the Java heap, which the JVM keeps.
   */
  public NDArray readArray(String name, long[] expectedShape, String owner, NDManager manager)
      throws IOException {
    Entry e = check(name, expectedShape, owner);
    Shape shape = new Shape(e.shape());
    if (e.dtype().equals("F32")) {
      try (FileChannel ch = FileChannel.open(e.file(), StandardOpenOption.READ)) {
        NDArray direct = OwnedArrays.read(manager, ch, e.start(), shape);
        if (direct != null) {
          return direct;
        }
      }
    }
    return OwnedArrays.create(manager, read(e), shape);
  }

  /** Any tensor's values, widened to float32. */
  public static float[] read(Entry e) throws IOException {
    long n = e.elements();
    if (n > Integer.MAX_VALUE - 8) {
      throw new IOException(e.file() + ": tensor " + e.name() + " has " + n
          + " elements, more than one Java array holds");
    }
    float[] out = new float[(int) n];
    int width = dtypeBytes(e.dtype());
    try (FileChannel ch = FileChannel.open(e.file(), StandardOpenOption.READ)) {
      int done = 0;
      for (long pos = e.start(); pos < e.end(); ) {
        long len = Math.min(MAP_CHUNK, e.end() - pos);
        MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, pos, len);
        map.order(ByteOrder.LITTLE_ENDIAN);
        int count = (int) (len / width);
        switch (e.dtype()) {
          case "F32":
            map.asFloatBuffer().get(out, done, count);
            break;
          case "BF16":
            for (int i = 0; i < count; i++) {
              out[done + i] = Float.intBitsToFloat((map.getShort(2 * i) & 0xffff) << 16);
            }
            break;
          default:
            for (int i = 0; i < count; i++) {
              out[done + i] = halfToFloat(map.getShort(2 * i));
            }
        }
        // unmapped now: a mapping lives until the garbage collector finds it, resident all along
        OwnedArrays.free(map);
        done += count;
        pos += len;
      }
    }
    return out;
  }

  /**
   * Writes float32 tensors as one safetensors file (header padded to 8 bytes, as the Rust writer
   * does), streaming each tensor, then moves it into place so no reader sees half a file.
   */
  public static void writeF32(Path file, Map<String, float[]> values, Map<String, long[]> shapes)
      throws IOException {
    Map<String, long[]> ordered = new LinkedHashMap<>();
    for (String name : values.keySet()) {
      ordered.put(name, shapes.get(name));
    }
    write(file, ordered, "F32", values::get);
  }

  /** One tensor's float32 values, produced when the writer reaches it. */
  @FunctionalInterface
  public interface TensorSource {
    float[] values(String name) throws IOException;
  }

  /**
   * Writes the tensors of {@code shapes} (in its order) as {@code dtype} "F32" or "F16" (rounded to
   * nearest even), asking {@code source} for one tensor at a time, so a writer holds at most one
   * tensor's values; the file is written under a temporary name and moved into place at the end.
   */
  public static void write(Path file, Map<String, long[]> shapes, String dtype, TensorSource source)
      throws IOException {
    if (!dtype.equals("F32") && !dtype.equals("F16")) {
      throw new IllegalArgumentException("safetensors output dtype: F32 or F16, not " + dtype);
    }
    int width = dtypeBytes(dtype);
    com.fasterxml.jackson.databind.node.ObjectNode header = JSON.createObjectNode();
    header.putObject("__metadata__").put("format", "pt");
    long offset = 0;
    for (Map.Entry<String, long[]> e : shapes.entrySet()) {
      long n = elements(e.getValue());
      var t = header.putObject(e.getKey());
      t.put("dtype", dtype);
      var s = t.putArray("shape");
      for (long d : e.getValue()) {
        s.add(d);
      }
      t.putArray("data_offsets").add(offset).add(offset + width * n);
      offset += width * n;
    }
    StringBuilder text = new StringBuilder(JSON.writeValueAsString(header));
    while (text.length() % 8 != 0) {
      text.append(' ');
    }
    byte[] h = text.toString().getBytes(StandardCharsets.UTF_8);
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      ByteBuffer head = ByteBuffer.allocate(8 + h.length).order(ByteOrder.LITTLE_ENDIAN);
      head.putLong(h.length).put(h).flip();
      writeFully(ch, head);
      for (Map.Entry<String, long[]> e : shapes.entrySet()) {
        float[] v = source.values(e.getKey());
        if (v.length != elements(e.getValue())) {
          throw new IllegalArgumentException(e.getKey() + ": " + v.length + " values for shape "
              + Arrays.toString(e.getValue()));
        }
        for (int from = 0; from < v.length; from += 1 << 20) {
          int len = Math.min(1 << 20, v.length - from);
          ByteBuffer b = ByteBuffer.allocate(width * len).order(ByteOrder.LITTLE_ENDIAN);
          if (width == 4) {
            b.asFloatBuffer().put(v, from, len);
          } else {
            for (int i = 0; i < len; i++) {
              b.putShort(2 * i, floatToHalf(v[from + i]));
            }
          }
          writeFully(ch, b);
        }
      }
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tmp);
      throw e;
    }
    Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  private static long elements(long[] shape) {
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    return n;
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  /** IEEE binary16 to binary32 (Java 17 has no Float.float16ToFloat). */
  public static float halfToFloat(short h) {
    int bits = h & 0xffff;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1f;
    int mant = bits & 0x3ff;
    if (exp == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13)); // inf or NaN
    }
    if (exp == 0) {
      if (mant == 0) {
        return Float.intBitsToFloat(sign);
      }
      float v = mant * (1f / (1 << 24)); // subnormal: mant * 2^-24
      return sign != 0 ? -v : v;
    }
    return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }

  /**
   * IEEE binary32 to binary16, rounded to nearest even as PyTorch's and numpy's casts do: overflow
   * to infinity, underflow through subnormals to signed zero, NaN kept a (quiet) NaN.
   */
  public static short floatToHalf(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int abs = bits & 0x7fffffff;
    if (abs >= 0x7f800000) { // inf or NaN
      return (short) (sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 | ((abs >>> 13) & 0x3ff) : 0));
    }
    if (abs >= 0x477ff000) { // rounds to 65536 or more
      return (short) (sign | 0x7c00);
    }
    if (abs < 0x38800000) { // below the smallest normal half, 2^-14: a subnormal or zero
      if (abs < 0x33000000) { // at most 2^-25, half the smallest subnormal: rounds to zero
        return (short) sign;
      }
      int exp = abs >>> 23;
      int mant = (abs & 0x7fffff) | 0x800000;
      int shift = 126 - exp; // value = mant * 2^(exp - 150); in units of 2^-24: mant >> (126 - exp)
      int half = mant >>> shift;
      int rest = mant & ((1 << shift) - 1);
      int mid = 1 << (shift - 1);
      if (rest > mid || (rest == mid && (half & 1) != 0)) {
        half++;
      }
      return (short) (sign | half);
    }
    // normal: rebias the exponent (127 -> 15) and round 13 mantissa bits off, ties to even;
    // a carry out of the mantissa correctly bumps the exponent
    int h = ((abs - 0x38000000) >>> 13);
    int rest = abs & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1) != 0)) {
      h++;
    }
    return (short) (sign | h);
  }
}
