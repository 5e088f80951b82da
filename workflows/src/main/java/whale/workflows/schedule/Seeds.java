package whale.workflows.schedule;

/**
 * Derives independent seeds from a run seed and a few integers (SplitMix64 finaliser). Pure and
 * stable across JVMs, so the workflow can hand every activity a seed without any randomness.
 */
public final class Seeds {
  private Seeds() {}

  public static long mix(long seed, long... parts) {
    long h = seed;
    for (long p : parts) {
      h = finalise(h ^ finalise(p + 0x9E3779B97F4A7C15L));
    }
    return h;
  }

  private static long finalise(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
