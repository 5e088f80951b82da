package whale.harness;

/**
 * One compile or validation problem of a harness source, as shown to the proposer.
 *
 * @param line 1-based line, or 0 when the problem has no position
 * @param column 1-based column, or 0
 * @param message readable message
 */
public record HarnessDiagnostic(long line, long column, String message) {
  @Override
  public String toString() {
    return line > 0 ? "line " + line + ":" + column + ": " + message : message;
  }
}
