package whale.model;

import com.sun.jna.Function;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Pins the instruction set of libtorch's CPU kernels, so that a seeded run gives the same bytes on
 * every machine of one CPU kind (vendor and vector extensions), whichever kernels its libraries
 * would pick by themselves.
 *
 * <p>libtorch picks its kernels by what the CPU offers, and kernels of other vector widths sum in
 * other orders: on an AVX2-only AMD EPYC the math comparison's base model scored 1.86 where an
 * AVX-512 machine scored 2.25 (issue 25). Three libraries choose, each read from the environment
 * the first time it computes:
 *
 * <ul>
 *   <li>ATen's own kernels (softmax, log-softmax, cross-entropy, element-wise ops):
 *       {@code ATEN_CPU_CAPABILITY=avx2} instead of avx512 where the CPU has it;
 *   <li>oneMKL, which libtorch links statically, for SGEMM and for exp, log, tanh and sqrt (its
 *       vector math): {@code MKL_CBWR=COMPATIBLE}, its conditional numerical reproducibility
 *       branch for every "Intel or compatible" CPU (SSE2 code). Its AVX2 branch is not enough:
 *       on non-Intel CPUs MKL ignores it and dispatches as it likes (oneMKL's CNR guide);
 *   <li>oneDNN, which computes GELU (forward and backward) for float32 tensors:
 *       {@code ONEDNN_MAX_CPU_ISA=AVX2}.
 * </ul>
 *
 * <p>That is not enough across CPU vendors: under these pins an Intel Xeon with AVX-512 and an
 * AVX2-only AMD EPYC wrote different pretrained bytes ({@code CrossProcessDeterminismTest} holds
 * both), while two Intel Xeons (with and without AMX) agreed op for op. Which kernel still tells
 * the vendors apart is not known yet; {@link #describe} names the CPU kind beside the pins.
 *
 * <p>The setting is {@code -Dwhale.cpuPins} or {@code WHALE_CPU_PINS}: {@code avx2} (the default)
 * sets the three variables in this process's environment before the engine starts (setenv, which
 * libtorch's getenv reads; {@link EngineSettings} calls {@link #mode} first);
 * {@code off} leaves the environment as it is, for speed or for pins of the operator's own. The
 * pins in force are read back from the libraries ({@link #describe}), not assumed.
 */
public final class CpuPins {
  /** What a process pins. */
  public enum Mode {
    AVX2,
    OFF
  }

  /** What {@link Mode#AVX2} sets, in the order it is reported. */
  public static final Map<String, String> AVX2_PINS = pins();

  /** The glibc call used to change this process's environment. */
  interface LibC extends Library {
    int setenv(String name, String value, int overwrite);
  }

  private static final LibC LIBC = loadLibC();
  private static final Mode MODE = apply();

  private CpuPins() {}

  private static Map<String, String> pins() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("ATEN_CPU_CAPABILITY", "avx2");
    m.put("MKL_CBWR", "COMPATIBLE");
    m.put("ONEDNN_MAX_CPU_ISA", "AVX2");
    return java.util.Collections.unmodifiableMap(m);
  }

  /** The mode of this process; the first call applies it (before the engine starts). */
  public static Mode mode() {
    return MODE;
  }

  /** The setting's value, checked: {@code avx2} or {@code off} (any case); blank is the default. */
  static Mode parse(String value) {
    if (value == null || value.isBlank()) {
      return Mode.AVX2;
    }
    switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "avx2":
        return Mode.AVX2;
      case "off":
        return Mode.OFF;
      default:
        throw new IllegalArgumentException("whale.cpuPins / WHALE_CPU_PINS must be avx2 (pin "
            + "libtorch's CPU kernels to AVX2, the default) or off, got '" + value + "'");
    }
  }

  private static Mode apply() {
    Mode mode = parse(System.getProperty("whale.cpuPins", System.getenv("WHALE_CPU_PINS")));
    if (mode == Mode.OFF) {
      return mode;
    }
    if (LIBC == null) {
      throw new IllegalStateException("whale.cpuPins=avx2 needs glibc's setenv to pin libtorch's "
          + "kernels (not found here); set WHALE_CPU_PINS=off, or export "
          + AVX2_PINS + " yourself and set it off");
    }
    for (Map.Entry<String, String> e : AVX2_PINS.entrySet()) {
      if (LIBC.setenv(e.getKey(), e.getValue(), 1) != 0) {
        throw new IllegalStateException("setenv(" + e.getKey() + ") failed");
      }
    }
    return mode;
  }

  /**
   * One line for a worker's start: the mode, the kernels libtorch and MKL really chose (read back
   * from them once the engine has run an op) and the CPU's kind ({@link #kind}). For example
   * {@code cpu pins avx2: ATen AVX2, MKL CNR COMPATIBLE (this CPU: AuthenticAMD fma avx2)}.
   */
  public static String describe() {
    List<String> flags = vectorFlags();
    return "cpu pins " + MODE.name().toLowerCase(Locale.ROOT) + ": ATen " + atenCapability()
        + ", MKL CNR " + mklBranch() + " (this CPU: " + kind() + ")"
        + (MODE == Mode.AVX2 && !(flags.contains("avx2") && flags.contains("fma"))
            ? "; WITHOUT AVX2 and FMA ATen falls back to other kernels and seeded results will "
                + "differ from pinned machines'" : "");
  }

  /**
   * The capability ATen's dispatcher chose ("AVX2", "AVX512", "DEFAULT"), read from
   * {@code at::get_cpu_capability()}; "unknown" where libtorch is not loaded or the symbol is not
   * there.
   */
  public static String atenCapability() {
    try {
      NativeLibrary torch = torchCpu();
      if (torch == null) {
        return "unknown";
      }
      // std::string at::get_cpu_capability(): returned through a hidden pointer to a libstdc++
      // string (data pointer, length, 16-byte inline buffer); the names are short, so inline.
      Function f = torch.getFunction("_ZN2at18get_cpu_capabilityB5cxx11Ev");
      Memory s = new Memory(32);
      f.invokeVoid(new Object[] {s});
      long length = s.getLong(8);
      if (length < 0 || length > 15) {
        return "unknown";
      }
      return new String(s.getPointer(0).getByteArray(0, (int) length),
          java.nio.charset.StandardCharsets.US_ASCII);
    } catch (IOException | UnsatisfiedLinkError | RuntimeException e) {
      return "unknown";
    }
  }

  /** MKL's CNR branch in force ("OFF" when not pinned), read from {@code mkl_serv_cbwr_get}. */
  public static String mklBranch() {
    try {
      NativeLibrary torch = torchCpu();
      if (torch == null) {
        return "unknown";
      }
      int branch = torch.getFunction("mkl_serv_cbwr_get").invokeInt(new Object[] {1});
      return MKL_BRANCHES.getOrDefault(branch, "code " + branch);
    } catch (IOException | UnsatisfiedLinkError | RuntimeException e) {
      return "unknown";
    }
  }

  // mkl_service.h's MKL_CBWR_* branch codes
  private static final Map<Integer, String> MKL_BRANCHES = Map.of(0, "OFF", 1, "BRANCH_OFF",
      2, "AUTO", 3, "COMPATIBLE", 4, "SSE2", 8, "SSE4_2", 9, "AVX", 10, "AVX2", 12, "AVX512",
      14, "AVX512_E1");

  /**
   * The CPU's kind as far as seeded bytes go: its vendor and the vector extensions that decide
   * kernels, for example {@code GenuineIntel fma avx2 avx512f}. Pinned runs on machines of one kind
   * write the same bytes; machines of other kinds may not (see the class comment).
   */
  public static String kind() {
    String vendor = "?";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("vendor_id")) {
          vendor = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return vendor + " " + String.join(" ", vectorFlags());
  }

  /** The x86 vector extensions that decide kernels, as /proc/cpuinfo names them. */
  public static List<String> vectorFlags() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("flags")) {
          List<String> found = new java.util.ArrayList<>();
          for (String f : line.substring(line.indexOf(':') + 1).trim().split("\\s+")) {
            if (f.equals("avx2") || f.equals("fma") || f.equals("avx512f")
                || f.startsWith("amx")) {
              found.add(f);
            }
          }
          return found;
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return List.of("?");
  }

  /** libtorch_cpu as this process loaded it (found in /proc/self/maps), or null. */
  private static NativeLibrary torchCpu() throws IOException {
    if (!Platform.isLinux()) {
      return null;
    }
    for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
      int at = line.indexOf('/');
      if (at >= 0 && line.endsWith("/libtorch_cpu.so")) {
        return NativeLibrary.getInstance(line.substring(at));
      }
    }
    return null;
  }

  private static LibC loadLibC() {
    if (!Platform.isLinux()) {
      return null;
    }
    try {
      return Native.load("c", LibC.class);
    } catch (UnsatisfiedLinkError e) {
      return null;
    }
  }
}
