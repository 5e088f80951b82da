package whale.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The token ids a server sampled, by the prompt text and the completion text it returned, so that
 * RSFT trains on exactly those ids rather than on a re-tokenization of the text (which can split it
 * otherwise: a stop string inside a token, a non-canonical BPE merge).
 *
 * <p>An episode's trained parts are matched by their context: a part trained after the context
 * {@code parts[0..i)} is the completion of the call whose prompt was that context, and its text is
 * the completion's text, or the completion's text and the end-of-turn token (a chat turn, which
 * {@code Trajectory} closes with the template's EOS). A part that matches no sampled completion
 * (a conversation whose template re-renders the model's reply otherwise) keeps its text and is
 * counted as {@link #unmatched}.
 */
public final class SampledTokens {
  private final Map<String, int[]> byCall = new ConcurrentHashMap<>();
  private int matched;
  private int unmatched;

  /** Records one completion: its prompt, returned text and sampled ids (EOS included when it ended there). */
  public void put(String prompt, String text, int[] ids) {
    byCall.put(prompt + '\u0000' + text, ids);
  }

  public boolean isEmpty() {
    return byCall.isEmpty();
  }

  /**
   * {@code ex} with each trained part that is a recorded completion given its sampled ids.
   *
   * @param eosText the chat template's end-of-turn text
   * @param eosId the id that ends a turn, appended when a turn's sampled ids lack it (the model was
   *     cut off by the length bound; the part's text was closed with EOS all the same)
   */
  public synchronized SftExample exact(SftExample ex, String eosText, int eosId) {
    List<int[]> ids = new ArrayList<>();
    StringBuilder context = new StringBuilder();
    boolean any = false;
    for (int i = 0; i < ex.parts().size(); i++) {
      String part = ex.parts().get(i);
      int[] found = null;
      if (SftExample.trained(i) && !part.isEmpty()) {
        found = byCall.get(context + "\u0000" + part);
        if (found == null && !eosText.isEmpty() && part.endsWith(eosText)) {
          int[] turn = byCall.get(context + "\u0000" + part.substring(0, part.length() - eosText.length()));
          if (turn != null) {
            boolean closed = turn.length > 0 && turn[turn.length - 1] == eosId;
            found = closed ? turn : appended(turn, eosId);
          }
        }
        if (found == null) {
          unmatched++;
        } else {
          matched++;
          any = true;
        }
      }
      ids.add(found);
      context.append(part);
    }
    return any ? new SftExample(ex.parts(), ids) : ex;
  }

  private static int[] appended(int[] ids, int id) {
    int[] out = Arrays.copyOf(ids, ids.length + 1);
    out[ids.length] = id;
    return out;
  }

  /** Trained parts given their sampled ids so far. */
  public synchronized int matched() {
    return matched;
  }

  /** Trained parts left to their text: no sampled completion had their context and text. */
  public synchronized int unmatched() {
    return unmatched;
  }
}
