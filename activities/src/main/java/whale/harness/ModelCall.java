package whale.harness;

/**
 * One model call of an episode.
 *
 * @param callIndex 0-based index of the call within its episode
 * @param seed the request's sampling seed (see {@link EpisodeSeeds})
 */
public record ModelCall(int callIndex, String prompt, int maxNewTokens, long seed, String completion,
    int promptTokens, int completionTokens) {}
