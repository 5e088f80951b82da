package whale.harness;

import java.util.List;
import whale.task.Task;

/**
 * What the proposer reads from a candidate's execution traces.
 *
 * @param episodes episodes summarised
 * @param successRate mean reward
 * @param meanTurns mean model calls per episode
 * @param unparseableFraction completed episodes whose answer is not well formed for the task (e.g. not
 *     an integer), over all episodes
 * @param turnBudgetFraction episodes that exceeded the turn budget
 * @param timeoutFraction episodes abandoned for running too long
 * @param errorFraction episodes that threw or broke another limit
 * @param meanCompletionTokens mean model-written tokens per episode
 */
public record TraceStats(int episodes, double successRate, double meanTurns, double unparseableFraction,
    double turnBudgetFraction, double timeoutFraction, double errorFraction, double meanCompletionTokens) {

  public static final TraceStats EMPTY = new TraceStats(0, 0, 0, 0, 0, 0, 0, 0);

  public static TraceStats of(List<EpisodeResult> results, Task task) {
    if (results.isEmpty()) {
      return EMPTY;
    }
    double reward = 0;
    double turns = 0;
    double tokens = 0;
    int unparseable = 0;
    int budget = 0;
    int timeout = 0;
    int error = 0;
    for (EpisodeResult r : results) {
      reward += r.reward();
      turns += r.turns();
      for (ModelCall c : r.modelCalls()) {
        tokens += c.completionTokens();
      }
      switch (r.status()) {
        case COMPLETED -> {
          if (!task.wellFormed(r.answer())) {
            unparseable++;
          }
        }
        case TURN_BUDGET_EXCEEDED -> budget++;
        case TIMEOUT -> timeout++;
        case ERROR -> error++;
        default -> { }
      }
    }
    double n = results.size();
    return new TraceStats(results.size(), reward / n, turns / n, unparseable / n, budget / n, timeout / n,
        error / n, tokens / n);
  }
}
