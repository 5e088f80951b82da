package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.engine.Engine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code model.device: cuda} says when this process cannot use a GPU. The environment and the
 * driver file are passed in, so each missing piece is tested on a machine without a GPU; the
 * engine's count is the real one where it matters.
 */
class CudaCheckTest {
  @TempDir Path tmp;

  private Map<String, String> wheelEnv(Path lib) {
    return Map.of(CudaCheck.LIBRARY_PATH, lib.toString(), CudaCheck.VERSION, "2.7.1",
        CudaCheck.FLAVOR, "cu128");
  }

  private Path driver() throws Exception {
    return Files.writeString(tmp.resolve("version"), "NVRM version: NVIDIA UNIX x86_64 Kernel "
        + "Module  570.86.15\n");
  }

  @Test
  void anEmptyEnvironmentNamesEveryVariableAndTheDriver() {
    String msg = CudaCheck.problem(Map.of(), tmp.resolve("no-driver"), () -> 0);
    assertTrue(msg.startsWith("model.device cuda needs a GPU this process cannot use: "), msg);
    assertTrue(msg.contains("PYTORCH_LIBRARY_PATH is not set: point it at the lib directory of the "
        + "PyPI wheel torch==2.7.1 (<site-packages>/torch/lib)"), msg);
    assertTrue(msg.contains("PYTORCH_VERSION is not set, must be 2.7.1"), msg);
    assertTrue(msg.contains("PYTORCH_FLAVOR is not set, must be cu128"), msg);
    assertTrue(msg.contains("no NVIDIA driver: " + tmp.resolve("no-driver") + " does not exist"), msg);
    assertTrue(msg.contains("the PyTorch engine sees no GPU (Engine.getGpuCount() = 0)"), msg);
  }

  @Test
  void aCpuOnlyWheelIsToldApartFromAMissingDirectory() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("torch/lib"));
    Files.writeString(lib.resolve("libc10.so"), "");
    String msg = CudaCheck.problem(wheelEnv(lib), driver(), () -> 0);
    assertTrue(msg.contains("PYTORCH_LIBRARY_PATH=" + lib + " has no libc10_cuda.so or "
        + "libtorch_cuda.so (a CPU-only torch build?"), msg);
    assertTrue(!msg.contains("PYTORCH_VERSION") && !msg.contains("driver"), msg);

    String gone = CudaCheck.problem(wheelEnv(tmp.resolve("nowhere")), driver(), () -> 0);
    assertTrue(gone.contains("PYTORCH_LIBRARY_PATH=" + tmp.resolve("nowhere") + " is not a directory"),
        gone);
  }

  @Test
  void wrongVersionOrFlavorIsQuoted() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    for (String so : CudaCheck.CUDA_LIBRARIES) {
      Files.writeString(lib.resolve(so), "");
    }
    Map<String, String> env = Map.of(CudaCheck.LIBRARY_PATH, lib.toString(), CudaCheck.VERSION,
        "2.5.1", CudaCheck.FLAVOR, "cpu");
    String msg = CudaCheck.problem(env, driver(), () -> 0);
    assertTrue(msg.contains("PYTORCH_VERSION is \"2.5.1\", must be 2.7.1"), msg);
    assertTrue(msg.contains("PYTORCH_FLAVOR is \"cpu\", must be cu128"), msg);
    assertTrue(!msg.contains("PYTORCH_LIBRARY_PATH"), msg);
  }

  @Test
  void aCompleteEnvironmentWhoseEngineSeesNoGpuSaysSo() throws Exception {
    Path lib = Files.createDirectories(tmp.resolve("lib"));
    for (String so : CudaCheck.CUDA_LIBRARIES) {
      Files.writeString(lib.resolve(so), "");
    }
    String msg = CudaCheck.problem(wheelEnv(lib), driver(), () -> 0);
    assertEquals("model.device cuda needs a GPU this process cannot use: the PyTorch engine sees "
        + "no GPU (Engine.getGpuCount() = 0); check CUDA_VISIBLE_DEVICES and that the driver "
        + "supports CUDA 12.6. See docs/models.md, GPU.", msg);
    String failed = CudaCheck.problem(wheelEnv(lib), driver(), () -> {
      throw new UnsatisfiedLinkError("libcudart.so.12: cannot open shared object file");
    });
    assertTrue(failed.contains("the PyTorch engine did not start: java.lang.UnsatisfiedLinkError: "
        + "libcudart.so.12"), failed);
    assertEquals("", CudaCheck.problem(wheelEnv(lib), driver(), () -> 1));
  }

  /** This machine, as it is: the real environment, driver file and engine. */
  @Test
  void thisProcessWithoutAGpuFailsToLoadACudaModelSayingWhy() {
    if (Engine.getEngine("PyTorch").getGpuCount() > 0) {
      return; // a GPU machine: bench/gpu-check runs the cuda path there
    }
    String expected = CudaCheck.problem(System.getenv(), CudaCheck.DRIVER, () -> 0);
    System.out.println("this machine: " + expected);
    assertTrue(expected.contains("the PyTorch engine sees no GPU"), expected);
    if (System.getenv(CudaCheck.LIBRARY_PATH) == null) {
      assertTrue(expected.contains("PYTORCH_LIBRARY_PATH is not set"), expected);
    }
    CudaCheck.GpuUnavailableException e = assertThrows(CudaCheck.GpuUnavailableException.class,
        () -> HfModel.load(HfFixtures.dir("qwen2"), List.of(),
            HfModel.Placement.of("float16", "cuda")));
    assertEquals(expected, e.getMessage());
  }
}
