package whale.model.gguf;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file (versions 2 and 3, little-endian): its metadata, its tensor infos, and each tensor's
 * bytes on demand. The file is memory-mapped, never read whole: the header through one mapping of
 * its first bytes, each tensor through a mapping of its own region.
 *
 * <p>Layout: magic "GGUF", u32 version, u64 tensor count, u64 metadata count; the metadata
 * (key string, u32 value type, value); the tensor infos (name, u32 dims, u64 ne[dims] innermost
 * first, u32 ggml type, u64 offset into the data section); then the data section, which starts at
 * the next multiple of {@code general.alignment} (default 32). Strings are u64 length + UTF-8.
 *
 * <p>Every size is checked when the file is opened, so a truncated or corrupt file fails there,
 * with the file and the item named, before any tensor is read.
 */
public final class GgufFile implements AutoCloseable {
  public static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
  public static final int DEFAULT_ALIGNMENT = 32;
  public static final String ALIGNMENT_KEY = "general.alignment";

  /** Metadata value types, by their GGUF number. */
  enum ValueType { UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64,
    INT64, FLOAT64 }

  /**
   * One tensor: {@code ne} as GGUF lists it, innermost (contiguous) dimension first, and
   * {@code offset} absolute in the file.
   */
  public record Tensor(String name, long[] ne, GgmlType type, long offset, long bytes) {
    public long elements() {
      long n = 1;
      for (long d : ne) {
        n *= d;
      }
      return n;
    }

    /** The shape in PyTorch's (row-major) order: {@code ne} reversed, so ne=[576, 49152] is [49152, 576]. */
    public long[] shape() {
      long[] s = new long[ne.length];
      for (int i = 0; i < ne.length; i++) {
        s[i] = ne[ne.length - 1 - i];
      }
      return s;
    }
  }

  private final Path file;
  private final FileChannel channel;
  private final int version;
  private final Map<String, Object> metadata;
  private final Map<String, Tensor> tensors;

  private GgufFile(Path file, FileChannel channel, int version, Map<String, Object> metadata,
      Map<String, Tensor> tensors) {
    this.file = file;
    this.channel = channel;
    this.version = version;
    this.metadata = metadata;
    this.tensors = tensors;
  }

  /** Opens and checks {@code file}; close it to release the mapping's file handle. */
  public static GgufFile open(Path file) throws IOException {
    FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
    try {
      return parse(file, ch);
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  private static GgufFile parse(Path file, FileChannel ch) throws IOException {
    long size = ch.size();
    // The header is mapped, not read: at most 2 GiB of it can be addressed, far beyond any real one.
    ByteBuffer b = ch.map(FileChannel.MapMode.READ_ONLY, 0, Math.min(size, Integer.MAX_VALUE))
        .order(ByteOrder.LITTLE_ENDIAN);
    Cursor in = new Cursor(file, b, size);
    if (size < 4 || b.getInt(0) != MAGIC) {
      throw new IOException(file + ": not a GGUF file (it does not start with \"GGUF\")");
    }
    in.skip(4);
    int version = in.u32("the version");
    if (version != 2 && version != 3) {
      throw new IOException(file + ": GGUF version " + Integer.toUnsignedString(version)
          + (Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
              ? " (a big-endian file?)" : "")
          + " is not supported; whale reads versions 2 and 3 (little-endian)");
    }
    // counts are not checked against the bytes left: each item read fails at the file's end anyway,
    // and then says where
    long tensorCount = in.u64("the tensor count");
    long kvCount = in.u64("the metadata count");
    Map<String, Object> meta = new LinkedHashMap<>();
    for (long i = 0; i < kvCount; i++) {
      String key = in.string("metadata key #" + i);
      int type = in.u32("the type of metadata " + key);
      meta.put(key, in.value(type, key));
    }
    long alignment = DEFAULT_ALIGNMENT;
    if (meta.containsKey(ALIGNMENT_KEY)) {
      Object a = meta.get(ALIGNMENT_KEY);
      alignment = a instanceof Long l ? l : -1;
      if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
        throw new IOException(file + ": metadata " + ALIGNMENT_KEY + " = " + a
            + ": must be a positive power of two");
      }
    }
    List<long[]> raw = new ArrayList<>(); // ne..., type, relative offset
    List<String> names = new ArrayList<>();
    for (long i = 0; i < tensorCount; i++) {
      String name = in.string("the name of tensor #" + i);
      int dims = in.u32("the dimension count of tensor " + name);
      if (dims < 1 || dims > 4) {
        throw new IOException(file + ": tensor " + name + " has " + Integer.toUnsignedString(dims)
            + " dimensions; GGUF allows 1 to 4");
      }
      long[] info = new long[dims + 2];
      for (int d = 0; d < dims; d++) {
        info[d] = in.u64("a dimension of tensor " + name);
        if (info[d] <= 0) {
          throw new IOException(file + ": tensor " + name + " has dimension " + info[d]);
        }
      }
      info[dims] = Integer.toUnsignedLong(in.u32("the type of tensor " + name));
      info[dims + 1] = in.u64("the offset of tensor " + name);
      names.add(name);
      raw.add(info);
    }
    long dataStart = (in.position() + alignment - 1) / alignment * alignment;
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    for (int i = 0; i < names.size(); i++) {
      tensors.put(names.get(i), tensor(file, size, names.get(i), raw.get(i), dataStart, alignment));
    }
    return new GgufFile(file, ch, version, Collections.unmodifiableMap(meta),
        Collections.unmodifiableMap(tensors));
  }

  private static Tensor tensor(Path file, long size, String name, long[] info, long dataStart,
      long alignment) throws IOException {
    long[] ne = Arrays.copyOf(info, info.length - 2);
    long typeId = info[info.length - 2];
    long offset = info[info.length - 1];
    GgmlType type = GgmlType.of(typeId);
    if (type == null) {
      throw new IOException(file + ": tensor " + name + " has ggml type " + typeId
          + ", which whale does not know");
    }
    long elements = 1;
    for (long d : ne) {
      if (elements > Long.MAX_VALUE / d) {
        throw new IOException(file + ": tensor " + name + " has absurd dimensions " + Arrays.toString(ne));
      }
      elements *= d;
    }
    if (ne[0] % type.blockSize != 0) {
      throw new IOException(file + ": tensor " + name + " of type " + type + " has rows of " + ne[0]
          + " values, not a multiple of its block size " + type.blockSize);
    }
    long bytes = type.bytes(elements);
    if (offset % alignment != 0) {
      throw new IOException(file + ": tensor " + name + " starts at data offset " + offset
          + ", not a multiple of the alignment " + alignment);
    }
    if (offset < 0 || dataStart + offset > size || bytes > size - dataStart - offset) {
      throw new IOException(file + ": truncated: tensor " + name + " needs bytes "
          + (dataStart + offset) + " to " + (dataStart + offset + bytes) + " but the file has "
          + size + " bytes");
    }
    return new Tensor(name, ne, type, dataStart + offset, bytes);
  }

  /** Reads the header with every length checked against what is left of the file. */
  private static final class Cursor {
    private final Path file;
    private final ByteBuffer b;
    private final long size;

    Cursor(Path file, ByteBuffer b, long size) {
      this.file = file;
      this.b = b;
      this.size = size;
    }

    long position() {
      return b.position();
    }

    private IOException truncated(String what) {
      return new IOException(file + ": truncated: the header ends inside " + what + " (the file has "
          + size + " bytes)");
    }

    private void need(long n, String what) throws IOException {
      if (n < 0 || n > b.remaining()) {
        throw truncated(what);
      }
    }

    void skip(int n) {
      b.position(b.position() + n);
    }

    int u32(String what) throws IOException {
      need(4, what);
      return b.getInt();
    }

    long u64(String what) throws IOException {
      need(8, what);
      return b.getLong();
    }

    /**
     * An array length, each element at least {@code minBytes} long, checked against the bytes
     * left, so that a corrupt length cannot make a huge list.
     */
    long count(String what, int minBytes) throws IOException {
      long n = u64(what);
      if (n < 0 || n > b.remaining() / minBytes) {
        throw new IOException(file + ": truncated or corrupt: " + what + " has "
            + Long.toUnsignedString(n) + " elements, more than the " + b.remaining()
            + " bytes left of the file can hold");
      }
      return n;
    }

    String string(String what) throws IOException {
      long len = u64(what);
      need(len, what);
      byte[] bytes = new byte[(int) len];
      b.get(bytes);
      try {
        // strict: a vocabulary entry that is not UTF-8 is a corrupt file, not a token to guess at
        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
      } catch (CharacterCodingException e) {
        throw new IOException(file + ": " + what + " is not valid UTF-8");
      }
    }

    /** A metadata value: integers as Long, FLOAT32 as Float, FLOAT64 as Double, arrays as List. */
    Object value(int type, String key) throws IOException {
      ValueType[] types = ValueType.values();
      if (type < 0 || type >= types.length) {
        throw new IOException(file + ": metadata " + key + " has value type "
            + Integer.toUnsignedString(type) + ", which is not a GGUF type (corrupt file?)");
      }
      String what = "metadata " + key;
      try {
        switch (types[type]) {
          case UINT8: need(1, what); return (long) (b.get() & 0xff);
          case INT8: need(1, what); return (long) b.get();
          case UINT16: need(2, what); return (long) (b.getShort() & 0xffff);
          case INT16: need(2, what); return (long) b.getShort();
          case UINT32: return Integer.toUnsignedLong(u32(what));
          case INT32: return (long) u32(what);
          case UINT64: case INT64: return u64(what);
          case FLOAT32: need(4, what); return b.getFloat();
          case FLOAT64: need(8, what); return b.getDouble();
          case BOOL: need(1, what); return b.get() != 0;
          case STRING: return string(what);
          default: { // ARRAY: element type, count, elements (arrays may nest)
            int elementType = u32(what);
            long n = count(what, 1);
            List<Object> list = new ArrayList<>((int) Math.min(n, 1 << 20));
            for (long i = 0; i < n; i++) {
              list.add(value(elementType, key + "[" + i + "]"));
            }
            return Collections.unmodifiableList(list);
          }
        }
      } catch (BufferUnderflowException e) {
        throw truncated(what);
      }
    }
  }

  public Path path() {
    return file;
  }

  public int version() {
    return version;
  }

  /** All metadata, in file order. */
  public Map<String, Object> metadata() {
    return metadata;
  }

  /** All tensors, in file order. */
  public Map<String, Tensor> tensors() {
    return tensors;
  }

  public boolean has(String key) {
    return metadata.containsKey(key);
  }

  private IOException missing(String key) {
    return new IOException(file + ": metadata key " + key + " is missing");
  }

  private IOException wrongType(String key, String expected) {
    Object v = metadata.get(key);
    return new IOException(file + ": metadata key " + key + " should be " + expected + ", but is "
        + (v instanceof List<?> ? "an array" : v.getClass().getSimpleName() + " " + v));
  }

  /** A required string. */
  public String string(String key) throws IOException {
    Object v = metadata.get(key);
    if (v == null) {
      throw missing(key);
    }
    if (!(v instanceof String s)) {
      throw wrongType(key, "a string");
    }
    return s;
  }

  /** A required integer of any width. */
  public long integer(String key) throws IOException {
    Object v = metadata.get(key);
    if (v == null) {
      throw missing(key);
    }
    if (!(v instanceof Long l)) {
      throw wrongType(key, "an integer");
    }
    return l;
  }

  /** An optional integer: {@code fallback} when absent. */
  public long integer(String key, long fallback) throws IOException {
    return metadata.containsKey(key) ? integer(key) : fallback;
  }

  /**
   * A required number. A FLOAT32 comes back as the shortest decimal that reads back as that float
   * (1e-5, not 9.999999747378752e-6), which is what the model's own config said.
   */
  public double number(String key) throws IOException {
    Object v = metadata.get(key);
    if (v == null) {
      throw missing(key);
    }
    if (v instanceof Float f) {
      return Double.parseDouble(Float.toString(f));
    }
    if (v instanceof Double || v instanceof Long) {
      return ((Number) v).doubleValue();
    }
    throw wrongType(key, "a number");
  }

  /** An optional number: {@code fallback} when absent. */
  public double number(String key, double fallback) throws IOException {
    return metadata.containsKey(key) ? number(key) : fallback;
  }

  /** An optional boolean: {@code fallback} when absent. */
  public boolean bool(String key, boolean fallback) throws IOException {
    Object v = metadata.get(key);
    if (v == null) {
      return fallback;
    }
    if (!(v instanceof Boolean bool)) {
      throw wrongType(key, "a boolean");
    }
    return bool;
  }

  /** A required array whose elements are all of {@code type} (String.class, Long.class, ...). */
  public <T> List<T> array(String key, Class<T> type) throws IOException {
    Object v = metadata.get(key);
    if (v == null) {
      throw missing(key);
    }
    if (!(v instanceof List<?> list)) {
      throw wrongType(key, "an array");
    }
    for (Object o : list) {
      if (!type.isInstance(o)) {
        throw new IOException(file + ": metadata key " + key + " should be an array of "
            + type.getSimpleName() + ", but holds " + o.getClass().getSimpleName() + " " + o);
      }
    }
    @SuppressWarnings("unchecked")
    List<T> typed = (List<T>) list;
    return typed;
  }

  /** The tensor named {@code name}, or null. */
  public Tensor tensor(String name) {
    return tensors.get(name);
  }

  /** A read-only little-endian mapping of one tensor's bytes. */
  public ByteBuffer data(Tensor t) throws IOException {
    if (t.bytes() > Integer.MAX_VALUE) {
      throw new IOException(file + ": tensor " + t.name() + " has " + t.bytes()
          + " bytes; whale maps at most 2 GiB per tensor");
    }
    return channel.map(FileChannel.MapMode.READ_ONLY, t.offset(), t.bytes())
        .order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
