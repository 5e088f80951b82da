package whale.harness;

import java.util.List;
import java.util.stream.Collectors;

/** A harness source that did not compile or broke the allow-list; the message lists every diagnostic. */
public class HarnessCompilationException extends Exception {
  private final List<HarnessDiagnostic> diagnostics;

  public HarnessCompilationException(List<HarnessDiagnostic> diagnostics) {
    super(format(diagnostics));
    this.diagnostics = List.copyOf(diagnostics);
  }

  public List<HarnessDiagnostic> diagnostics() {
    return diagnostics;
  }

  static String format(List<HarnessDiagnostic> diagnostics) {
    return diagnostics.stream().map(HarnessDiagnostic::toString).collect(Collectors.joining("\n"));
  }
}
