package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.model.CpuPins;
import whale.store.ArtifactStore;

/**
 * "The same seed gives the same result" across processes, which comparisons, replays and crash
 * recovery rest on: two JVMs started side by side (so their sandbox batches are cut at different
 * moments) pretrain the same base and take the same RSFT step into separate stores. References are
 * the sha256 of the bytes, so equal references are identical checkpoint and rollout files.
 *
 * <p>Two causes made them differ before (issue 14): sandbox batches cut by timing met kernels that
 * sum differently for small batches (now padded, see {@code LanguageModel.MIN_GEMM_ROWS}), and DJL
 * scalar ops freed a buffer autograd still needed, so a garbage collection between forward and
 * backward changed the gradients (see {@code whale.model.Scalars}). The probes print their
 * collection counts beside the references; collections during the step are expected and harmless.
 *
 * <p>The two are also pinned two ways (whale's own setenv, and the environment with whale's pinning
 * off), and on a CPU kind whose pinned bytes were recorded ({@link CpuPins#kind}) they must be
 * those bytes, so a change that alters pretraining or the step fails here on every known machine
 * (issue 25). The pins do not make CPU kinds agree with each other: see {@link #PINNED}.
 *
 * <p>Both probes pretrain for real, each in its fresh store: that is the point. Their base is then
 * {@link WeightActivitiesTest}'s, offered to {@link SharedBases} so that class does not train it
 * again; when that class ran first, its in-JVM base must be these bytes too.
 */
class CrossProcessDeterminismTest {
  /**
   * What the probe writes under the pins, by CPU kind: base, then step, accepted rollouts and the
   * rollouts' reference. An AVX2-only AMD EPYC and an Intel Xeon with AVX-512 disagree under the
   * same pins (ATen AVX2, MKL COMPATIBLE, oneDNN AVX2; measured 2026-12-04). On the Xeon a JVM
   * held to AVX2 code (-XX:UseAVX=2), glibc with its AVX-512 variants masked and MKL held to AVX2
   * instructions all wrote its pinned bytes again, so none of those is the difference
   * (docs/reproducibility.md, "The same bytes on other machines"). Unpinned, the EPYC wrote base
   * 36bf9818.... An AMD EPYC with AVX-512 (Zen 4, 2026-12-06) writes the AVX2-only EPYC's bytes
   * exactly: within a vendor the pinned bytes do not depend on AVX-512 or AMX being there, across
   * vendors they differ.
   * A change that means to alter pretraining or the step updates every row it can measure and
   * deletes the others.
   */
  static final Map<String, List<String>> PINNED = Map.of(
      // an Intel Xeon with AMX (2026-12-06): the AVX-512 Xeon's bytes exactly
      "GenuineIntel fma avx2 avx512f amx_bf16 amx_tile amx_int8", List.of(
          "base=sha256:e7b4d54ef52c65f6a2b471966171c33a59730c92262fa0a2aa93da50b9e4b16c",
          "step=sha256:07de90d1557afc02f14847fcba4d4faacf4485e0b1abf9222f4bfff392779e5e accepted=8"
              + " rollouts=sha256:cb7d2430d28bd0714e0b89207c8d3aa97386ec4a6bc54d9715a9c15581d3bdcb"),
      "AuthenticAMD fma avx2", List.of(
          "base=sha256:45d98a134f27d08350fc5aff272ce110bc069653e4095aa784be99cc5c3277a0",
          "step=sha256:b4ea4cbdb475323591ae8c78a6525ec6da89f0df32d217ff4ef56bdf5a4c720c accepted=2"
              + " rollouts=sha256:69352cf98ab709195a04cf608a243a8c1bb0f0954c687dc44fecd51e68f29e31"),
      // an AMD EPYC with AVX-512 (Zen 4, 2026-12-06): the AVX2-only EPYC's bytes exactly
      "AuthenticAMD fma avx2 avx512f", List.of(
          "base=sha256:45d98a134f27d08350fc5aff272ce110bc069653e4095aa784be99cc5c3277a0",
          "step=sha256:b4ea4cbdb475323591ae8c78a6525ec6da89f0df32d217ff4ef56bdf5a4c720c accepted=2"
              + " rollouts=sha256:69352cf98ab709195a04cf608a243a8c1bb0f0954c687dc44fecd51e68f29e31"),
      "GenuineIntel fma avx2 avx512f", List.of(
          "base=sha256:e7b4d54ef52c65f6a2b471966171c33a59730c92262fa0a2aa93da50b9e4b16c",
          "step=sha256:07de90d1557afc02f14847fcba4d4faacf4485e0b1abf9222f4bfff392779e5e accepted=8"
              + " rollouts=sha256:cb7d2430d28bd0714e0b89207c8d3aa97386ec4a6bc54d9715a9c15581d3bdcb"));

  @TempDir Path dir;

  @Test
  void twoProcessesWriteTheSameBaseAndStepBytes() throws Exception {
    List<Process> procs = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      ProcessBuilder pb = new ProcessBuilder(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
          "-cp", System.getProperty("java.class.path"), DeterminismProbe.class.getName(),
          dir.resolve("store" + i).toString()).redirectErrorStream(true);
      // The first pins itself (CpuPins, as a worker started by hand does); the second is pinned by
      // its environment, as the operator would, with whale's own pinning off.
      pb.environment().keySet().removeAll(CpuPins.AVX2_PINS.keySet());
      pb.environment().remove("WHALE_CPU_PINS");
      if (i == 1) {
        pb.environment().putAll(CpuPins.AVX2_PINS);
        pb.environment().put("WHALE_CPU_PINS", "off");
      }
      procs.add(pb.start());
    }
    List<List<String>> outputs = new ArrayList<>();
    for (Process p : procs) {
      outputs.add(refs(p));
    }
    System.out.println("process 1: " + outputs.get(0) + "\nprocess 2: " + outputs.get(1));
    assertEquals(3, outputs.get(0).size(), "probe output: " + outputs.get(0));
    assertTrue(outputs.get(0).get(2).matches(".* accepted=[1-9][0-9]* .*"),
        "the step trains on accepted rollouts: " + outputs.get(0));
    assertEquals(outputs.get(0).subList(1, 3), outputs.get(1).subList(1, 3),
        "collections per process: " + outputs.get(0).get(0) + " / " + outputs.get(1).get(0));
    List<String> known = PINNED.get(CpuPins.kind());
    if (known == null) {
      System.out.println("no pinned bytes recorded for CPU kind '" + CpuPins.kind()
          + "': add this machine's to PINNED: " + outputs.get(0).subList(1, 3));
    } else {
      assertEquals(known, outputs.get(0).subList(1, 3), "the pinned bytes of a " + CpuPins.kind()
          + " CPU");
    }
    String base = outputs.get(0).get(1).substring("base=".length());
    assertEquals(base, SharedBases.offer(DeterminismProbe.BASE,
        new ArtifactStore(dir.resolve("store0")).getBytes(base)), "the base trained in this JVM");
  }

  private static List<String> refs(Process p) throws IOException, InterruptedException {
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(5, TimeUnit.MINUTES), "probe did not finish");
    assertEquals(0, p.exitValue(), out);
    List<String> lines = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (line.startsWith("base=") || line.startsWith("step=") || line.startsWith("gc ")) {
        lines.add(line);
      }
    }
    return lines;
  }
}
