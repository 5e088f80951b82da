package whale.harness;

/**
 * One candidate of the current harness phase as the proposer sees it.
 *
 * @param name the candidate's name
 * @param source its full source
 * @param valid whether it compiled and implemented the interface
 * @param compileErrors diagnostics when invalid, else null
 * @param successRate mean reward on D_harness (0 when invalid)
 * @param meanTurns mean model calls per episode
 * @param traceStats statistics of its execution traces ({@link TraceStats#EMPTY} when invalid)
 */
public record ArchiveEntry(String name, String source, boolean valid, String compileErrors, double successRate,
    double meanTurns, TraceStats traceStats) {

  public ArchiveEntry {
    traceStats = traceStats == null ? TraceStats.EMPTY : traceStats;
  }

  public static ArchiveEntry scored(String name, String source, TraceStats stats) {
    return new ArchiveEntry(name, source, true, null, stats.successRate(), stats.meanTurns(), stats);
  }

  public static ArchiveEntry invalid(String name, String source, String compileErrors) {
    return new ArchiveEntry(name, source, false, compileErrors, 0, 0, TraceStats.EMPTY);
  }
}
