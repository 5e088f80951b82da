package whale.model;

/**
 * Character tokenizer with a fixed vocabulary, so token ids mean the same thing in every run and every
 * checkpoint: id 0 is padding, id 1 is {@code '\n'}, ids 2..96 are printable ASCII 32..126.
 *
 * <p>Any other character (tab, carriage return, non-ASCII) is encoded as {@code '?'}: lossy, but the
 * model never sees an id it has no row for, and harness text with a stray Unicode quote still runs.
 */
public final class CharTokenizer {
  public static final int PAD = 0;
  public static final int NEWLINE = 1;
  private static final int FIRST_PRINTABLE = 32;
  private static final int LAST_PRINTABLE = 126;
  public static final int VOCAB_SIZE = 2 + (LAST_PRINTABLE - FIRST_PRINTABLE + 1); // 97
  public static final int UNKNOWN = id('?');

  private CharTokenizer() {}

  /** The id of one character; characters outside the vocabulary map to {@link #UNKNOWN}. */
  public static int id(char c) {
    if (c == '\n') {
      return NEWLINE;
    }
    if (c >= FIRST_PRINTABLE && c <= LAST_PRINTABLE) {
      return 2 + (c - FIRST_PRINTABLE);
    }
    return 2 + ('?' - FIRST_PRINTABLE);
  }

  public static int[] encode(String text) {
    int[] ids = new int[text.length()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = id(text.charAt(i));
    }
    return ids;
  }

  /** The text of one id; padding decodes to the empty string. */
  public static String decode(int id) {
    if (id == PAD) {
      return "";
    }
    if (id == NEWLINE) {
      return "\n";
    }
    if (id < 0 || id >= VOCAB_SIZE) {
      throw new IllegalArgumentException("token id out of range: " + id);
    }
    return String.valueOf((char) (FIRST_PRINTABLE + id - 2));
  }

  public static String decode(int[] ids) {
    StringBuilder sb = new StringBuilder(ids.length);
    for (int id : ids) {
      sb.append(decode(id));
    }
    return sb.toString();
  }
}
