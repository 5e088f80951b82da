package whale.workflows;

import java.util.List;
import java.util.Locale;

/** Renders the run so far as a short markdown table: the Web UI's current details and the CLI. */
public final class RunTable {
  private RunTable() {}

  public static String markdown(ExperimentSpec spec, List<RunEvent> evaluations, String harness) {
    StringBuilder b = new StringBuilder();
    b.append("**").append(spec.name()).append("** · ").append(spec.task()).append(" · schedule ")
        .append(spec.schedule()).append(" · harness `").append(harness).append("`\n\n");
    b.append("| round | phase | step | rollouts | mean@").append(spec.eval().k())
        .append(" | pass@").append(spec.eval().k()).append(" | maj@").append(spec.eval().k())
        .append(" |\n|---|---|---|---|---|---|---|\n");
    for (RunEvent e : evaluations) {
      b.append(String.format(Locale.ROOT, "| %d | %s | %d | %d | %.3f | %.3f | %.3f |%n",
          e.round(), e.phase(), e.step(), e.rollouts(), e.meanAt8(), e.passAt8(), e.majAt8()));
    }
    return b.toString();
  }
}
