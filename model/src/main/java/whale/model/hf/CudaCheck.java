package whale.model.hf;

import ai.djl.engine.Engine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * Whether this process can run a model on a GPU, and if not, exactly what is missing. DJL 0.36 has
 * no CUDA natives on Maven Central; its PyTorch engine reaches a GPU only through the libtorch of the
 * PyPI wheel {@code torch==2.7.1} (see platform-notes, "DJL"): {@code PYTORCH_LIBRARY_PATH} at the
 * wheel's {@code torch/lib}, {@code PYTORCH_VERSION=2.7.1}, {@code PYTORCH_FLAVOR=cu128}, and an
 * NVIDIA driver. Otherwise the engine quietly starts on its bundled CPU libtorch and reports no GPU,
 * which says nothing about why; this check names each cause.
 */
public final class CudaCheck {
  public static final String LIBRARY_PATH = "PYTORCH_LIBRARY_PATH";
  public static final String VERSION = "PYTORCH_VERSION";
  public static final String FLAVOR = "PYTORCH_FLAVOR";
  public static final String TORCH_VERSION = "2.7.1";
  public static final String TORCH_FLAVOR = "cu128";
  /** Libraries of the wheel's torch/lib that only a CUDA build has. */
  static final List<String> CUDA_LIBRARIES = List.of("libc10_cuda.so", "libtorch_cuda.so");
  static final Path DRIVER = Path.of("/proc/driver/nvidia/version");

  /** A GPU was asked for and this process cannot use one; the message lists every cause found. */
  public static final class GpuUnavailableException extends IllegalStateException {
    public GpuUnavailableException(String message) {
      super(message);
    }
  }

  private static volatile String cached;

  private CudaCheck() {}

  /**
   * Throws {@link GpuUnavailableException} unless the PyTorch engine of this process sees a GPU.
   * The answer is the same for the life of the process (the engine loads its natives once).
   */
  public static void require() {
    String problem = cached;
    if (problem == null) {
      problem = problem(System.getenv(), DRIVER, CudaCheck::engineGpus);
      cached = problem;
    }
    if (!problem.isEmpty()) {
      throw new GpuUnavailableException(problem);
    }
  }

  /**
   * "" when the engine sees a GPU; otherwise one message naming each missing piece: the
   * environment's variables and library directory, the driver file, the engine's GPU count (asked
   * last, as starting the engine is what the variables configure).
   */
  static String problem(Map<String, String> env, Path driver, IntSupplier gpus) {
    List<String> missing = new ArrayList<>(environment(env));
    if (!Files.exists(driver)) {
      missing.add("no NVIDIA driver: " + driver + " does not exist (on a container, run it with "
          + "the NVIDIA runtime: docker --gpus all, or a GPU resource in Kubernetes)");
    }
    int count;
    try {
      count = gpus.getAsInt();
    } catch (RuntimeException | LinkageError e) {
      missing.add("the PyTorch engine did not start: " + e);
      count = -1;
    }
    if (count == 0) {
      missing.add("the PyTorch engine sees no GPU (Engine.getGpuCount() = 0)"
          + (missing.isEmpty() ? "; check CUDA_VISIBLE_DEVICES and that the driver supports CUDA "
              + "12.6" : ""));
    }
    if (count > 0) { // the engine sees a GPU: whatever else looks unusual, it works
      return "";
    }
    return "model.device cuda needs a GPU this process cannot use: " + String.join("; ", missing)
        + ". See docs/models.md, GPU.";
  }

  /** What the environment lacks for DJL to load the wheel's CUDA libtorch. */
  static List<String> environment(Map<String, String> env) {
    List<String> missing = new ArrayList<>();
    String lib = env.get(LIBRARY_PATH);
    if (lib == null || lib.isBlank()) {
      missing.add(LIBRARY_PATH + " is not set: point it at the lib directory of the PyPI wheel "
          + "torch==" + TORCH_VERSION + " (<site-packages>/torch/lib)");
    } else if (!Files.isDirectory(Path.of(lib))) {
      missing.add(LIBRARY_PATH + "=" + lib + " is not a directory");
    } else {
      List<String> absent = new ArrayList<>();
      for (String so : CUDA_LIBRARIES) {
        if (!Files.exists(Path.of(lib, so))) {
          absent.add(so);
        }
      }
      if (!absent.isEmpty()) {
        missing.add(LIBRARY_PATH + "=" + lib + " has no " + String.join(" or ", absent)
            + " (a CPU-only torch build? install torch==" + TORCH_VERSION
            + " from PyPI's default index, which is the CUDA build)");
      }
    }
    String version = env.get(VERSION);
    if (!TORCH_VERSION.equals(version)) {
      missing.add(VERSION + " is " + (version == null ? "not set" : "\"" + version + "\"")
          + ", must be " + TORCH_VERSION + " (the libtorch DJL 0.36's pytorch-jni is built for)");
    }
    String flavor = env.get(FLAVOR);
    if (!TORCH_FLAVOR.equals(flavor)) {
      missing.add(FLAVOR + " is " + (flavor == null ? "not set" : "\"" + flavor + "\"")
          + ", must be " + TORCH_FLAVOR + " (the CUDA flavor whose libdjl_torch.so the pytorch-jni "
          + "jar holds; unset, DJL looks for a -precxx11 flavor it lacks)");
    }
    return missing;
  }

  /** GPUs the PyTorch engine of this process sees. */
  public static int gpuCount() {
    return engineGpus();
  }

  private static int engineGpus() {
    return Engine.getEngine("PyTorch").getGpuCount();
  }
}
