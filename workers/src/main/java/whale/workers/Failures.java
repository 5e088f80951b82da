package whale.workers;

import io.temporal.client.WorkflowException;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.failure.TemporalFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The one line a failed command ends with: the root cause, not the layers Temporal wraps it in. */
final class Failures {
  private Failures() {}

  /**
   * A failed run arrives as WorkflowFailedException / ChildWorkflowFailure / ActivityFailure /
   * ApplicationFailure, the wrappers' messages dumps of ids and metadata; what the user can act on
   * is the messages of the failures under them ("file:line: reason", "invalid experiment spec:
   * ..."), outermost first, a message repeated by its cause said once.
   */
  static String rootMessage(Throwable ex) {
    Throwable t = ex;
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (isTemporal(t)) {
      List<String> said = new ArrayList<>();
      for (Throwable c = t; c != null && said.size() < 10; c = c.getCause() == c ? null : c.getCause()) {
        if (c instanceof WorkflowException || c instanceof ActivityFailure || c instanceof ChildWorkflowFailure) {
          continue; // wrappers: ids and metadata only
        }
        String m = c instanceof TemporalFailure f ? f.getOriginalMessage() : c.getMessage();
        if (m != null && !m.isBlank() && (said.isEmpty() || !said.get(said.size() - 1).contains(m.strip()))) {
          said.add(m.strip());
        }
      }
      if (!said.isEmpty()) {
        return oneLine(String.join(": ", said));
      }
    }
    return oneLine(t.getMessage() == null || t.getMessage().isBlank() ? t.toString() : t.getMessage());
  }

  private static boolean isTemporal(Throwable t) {
    return t instanceof TemporalFailure || t instanceof WorkflowException;
  }

  private static String oneLine(String s) {
    return s.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
