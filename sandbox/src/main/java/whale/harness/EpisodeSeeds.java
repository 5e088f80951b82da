package whale.harness;

import java.nio.charset.StandardCharsets;

/**
 * Deterministic per-request seeds: a function of (run seed, problem id, sample index, call index)
 * only, so an episode's completions do not depend on which other episodes share its batches.
 */
public final class EpisodeSeeds {
  private EpisodeSeeds() {}

  /**
   * splitmix64 chain: h = mix(runSeed ^ GOLDEN); h = mix(h ^ fnv1a64(problemId utf-8));
   * h = mix(h ^ (sampleIndex * C1 + 1)); h = mix(h ^ (callIndex * C2 + 2)).
   */
  public static long requestSeed(long runSeed, String problemId, int sampleIndex, int callIndex) {
    long h = mix64(runSeed ^ 0x9E3779B97F4A7C15L);
    h = mix64(h ^ fnv1a64(problemId));
    h = mix64(h ^ (sampleIndex * 0xC2B2AE3D27D4EB4FL + 1));
    h = mix64(h ^ (callIndex * 0x165667B19E3779F9L + 2));
    return h;
  }

  public static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  public static long fnv1a64(String s) {
    long h = 0xCBF29CE484222325L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= (b & 0xff);
      h *= 0x100000001B3L;
    }
    return h;
  }
}
