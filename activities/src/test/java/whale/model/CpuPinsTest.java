package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The instruction-set pins reach the libraries that choose kernels: each case starts a fresh JVM
 * (the pins act only before libtorch first computes) whose environment has none of the variables,
 * as a worker started by hand has, and reads back what ATen and MKL chose after a matrix product.
 * That the pins make bytes equal across processes is {@code CrossProcessDeterminismTest}'s.
 */
class CpuPinsTest {
  @Test
  void theSettingIsAvx2OrOffAndABadValueIsNamed() {
    assertEquals(CpuPins.Mode.AVX2, CpuPins.parse(null));
    assertEquals(CpuPins.Mode.AVX2, CpuPins.parse(" AVX2 "));
    assertEquals(CpuPins.Mode.OFF, CpuPins.parse("off"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> CpuPins.parse("avx512"));
    assertTrue(e.getMessage().contains("WHALE_CPU_PINS must be avx2"), e.getMessage());
    assertTrue(e.getMessage().contains("got 'avx512'"), e.getMessage());
  }

  @Test
  void byDefaultAProcessPinsAtenToAvx2AndMklToItsCompatibleBranch() throws Exception {
    String out = probe(null);
    assertTrue(out.contains("aten=AVX2\n"), out);
    assertTrue(out.contains("mkl=COMPATIBLE\n"), out);
  }

  @Test
  void offLeavesTheLibrariesToChooseByTheCpu() throws Exception {
    String out = probe("off");
    assertTrue(out.contains("mkl=BRANCH_OFF\n"), "MKL dispatches freely: " + out);
    assertTrue(out.matches("(?s).*aten=(AVX2|AVX512|AVX512_VNNI|AVX512_BF16|AMX|DEFAULT)\n.*"),
        "ATen's own choice: " + out);
  }

  @Test
  void aBadSettingStopsTheProcessNamingIt() throws Exception {
    Process p = start("avx512");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(2, TimeUnit.MINUTES));
    assertNotEquals(0, p.exitValue(), out);
    assertTrue(out.contains("WHALE_CPU_PINS must be avx2"), out);
  }

  private static String probe(String setting) throws Exception {
    Process p = start(setting);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(2, TimeUnit.MINUTES), "probe did not finish");
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  private static Process start(String setting) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-cp", System.getProperty("java.class.path"), CpuPinsProbe.class.getName())
        .redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.keySet().removeAll(CpuPins.AVX2_PINS.keySet()); // surefire's own pins (the pom) go too
    env.remove("WHALE_CPU_PINS");
    if (setting != null) {
      env.put("WHALE_CPU_PINS", setting);
    }
    return pb.start();
  }
}
