package whale.model.vllm;

/** A vLLM server failed a request; the message names the server's URL (and the adapter path, if any). */
public final class VllmException extends RuntimeException {
  private final boolean transientFailure;
  private final int status;

  public VllmException(String message, boolean transientFailure, Throwable cause) {
    this(message, transientFailure, cause, 0);
  }

  public VllmException(String message, boolean transientFailure, Throwable cause, int status) {
    super(message, cause);
    this.transientFailure = transientFailure;
    this.status = status;
  }

  /**
   * Whether a later try may succeed: the server unreachable, timing out or answering 5xx (it may be
   * restarting). A 4xx answer or malformed JSON repeats on every try.
   */
  public boolean transientFailure() {
    return transientFailure;
  }

  /** The HTTP status the server answered with, or 0 when it did not answer. */
  public int status() {
    return status;
  }
}
