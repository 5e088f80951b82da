package whale.workers;

import io.temporal.failure.TemporalFailure;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The one line a failed command ends with: the root cause, not the layers Temporal wraps it in. */
final class Failures {
  private Failures() {}

  /**
   * A failed run arrives as WorkflowFailedException / ChildWorkflowFailure / ActivityFailure /
   * ApplicationFailure, each message a dump of ids and metadata; the deepest failure's own message
   * ("file:line: reason", "invalid experiment spec: ...") is what the user can act on.
   */
  static String rootMessage(Throwable ex) {
    Throwable t = ex;
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (isTemporal(t)) {
      Throwable deepest = t;
      for (Throwable c = t.getCause(); c != null && c != deepest; c = c.getCause()) {
        deepest = c;
      }
      String m = deepest instanceof TemporalFailure f ? f.getOriginalMessage() : deepest.getMessage();
      t = deepest;
      if (m != null && !m.isBlank()) {
        return oneLine(m);
      }
    }
    return oneLine(t.getMessage() == null || t.getMessage().isBlank() ? t.toString() : t.getMessage());
  }

  private static boolean isTemporal(Throwable t) {
    return t instanceof TemporalFailure || t instanceof io.temporal.client.WorkflowException;
  }

  private static String oneLine(String s) {
    return s.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
