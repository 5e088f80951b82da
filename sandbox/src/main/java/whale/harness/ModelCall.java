package whale.harness;

import whale.chat.ChatCall;

/**
 * One model call of an episode.
 *
 * @param callIndex 0-based index of the call within its episode
 * @param prompt the text the model completed (for a chat call: the rendered chat template)
 * @param seed the request's sampling seed (see {@link EpisodeSeeds})
 * @param chat for a {@link HarnessContext#chat} call, its messages and tools; null for generate
 */
public record ModelCall(int callIndex, String prompt, int maxNewTokens, long seed, String completion,
    int promptTokens, int completionTokens, ChatCall chat) {
  public ModelCall(int callIndex, String prompt, int maxNewTokens, long seed, String completion,
      int promptTokens, int completionTokens) {
    this(callIndex, prompt, maxNewTokens, seed, completion, promptTokens, completionTokens, null);
  }
}
