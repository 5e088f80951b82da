package whale.proposers;

/**
 * Keeps an API key out of what whale records. Servers echo keys back (OpenAI's "Incorrect API key
 * provided: sk-...", a proxy's error page, a model quoting its request), and whatever an activity
 * returns or throws lands in workflow histories, the archive and the logs; so every text that came
 * from a server carrying the key goes through {@link #redact} first.
 */
public final class Secrets {
  public static final String REDACTED = "[redacted]";

  private Secrets() {}

  /** {@code text} with every occurrence of {@code secret} replaced; unchanged when there is none. */
  public static String redact(String text, String secret) {
    if (text == null || secret == null || secret.isBlank()) {
      return text;
    }
    return text.replace(secret, REDACTED);
  }
}
