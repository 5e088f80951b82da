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
 * @param toolCallFraction model calls whose completion holds a {@code <tool_call>} block, over all
 *     model calls: a model that calls tools under a harness that never runs them shows here
 */
public record TraceStats(int episodes, double successRate, double meanTurns, double unparseableFraction,
    double turnBudgetFraction, double timeoutFraction, double errorFraction, double meanCompletionTokens,
    double toolCallFraction) {

  public static final TraceStats EMPTY = new TraceStats(0, 0, 0, 0, 0, 0, 0, 0, 0);

  /** Statistics without the tool-call signal. */
  public TraceStats(int episodes, double successRate, double meanTurns, double unparseableFraction,
      double turnBudgetFraction, double timeoutFraction, double errorFraction,
      double meanCompletionTokens) {
    this(episodes, successRate, meanTurns, unparseableFraction, turnBudgetFraction, timeoutFraction,
        errorFraction, meanCompletionTokens, 0);
  }

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
    int calls = 0;
    int toolCalls = 0;
    for (EpisodeResult r : results) {
      reward += r.reward();
      turns += r.turns();
      for (ModelCall c : r.modelCalls()) {
        tokens += c.completionTokens();
        calls++;
        if (c.completion() != null && c.completion().contains("<tool_call>")) {
          toolCalls++;
        }
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
        error / n, tokens / n, calls == 0 ? 0 : (double) toolCalls / calls);
  }
}
