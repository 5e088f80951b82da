package whale.harness;

/** Thrown into harness code that broke an episode limit; the episode fails whatever the harness does next. */
public class HarnessLimitException extends RuntimeException {
  public HarnessLimitException(String message) {
    super(message);
  }
}
