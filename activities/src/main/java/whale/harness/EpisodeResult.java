package whale.harness;

import java.util.ArrayList;
import java.util.List;
import whale.model.SftExample;

/**
 * One episode (problem × sample index) and its full trace.
 *
 * @param answer the harness's answer (capped), or null when it gave none
 * @param reward the task verifier's reward; 0 unless status is COMPLETED
 * @param turns model calls made
 * @param error null when COMPLETED, else why the episode failed
 */
public record EpisodeResult(String problemId, int sampleIndex, String answer, double reward, int turns,
    List<ModelCall> modelCalls, List<ToolCall> toolCalls, List<String> notes, EpisodeStatus status,
    String error) {

  public EpisodeResult {
    modelCalls = List.copyOf(modelCalls);
    toolCalls = List.copyOf(toolCalls);
    notes = List.copyOf(notes);
  }

  /** RSFT acceptance: reward > 0.5. */
  public boolean accepted() {
    return reward > 0.5;
  }

  /**
   * One SFT example per model call: the prompt the harness built (masked out of the loss) and the
   * completion the model wrote (the loss covers it, including its terminating newline).
   */
  public List<SftExample> sftExamples() {
    List<SftExample> out = new ArrayList<>(modelCalls.size());
    for (ModelCall c : modelCalls) {
      out.add(new SftExample(c.prompt(), c.completion()));
    }
    return out;
  }

  /** The model's completions of these calls, in call order: what the verifier's trace rule reads. */
  public static List<String> completions(List<ModelCall> calls) {
    List<String> out = new ArrayList<>(calls.size());
    for (ModelCall c : calls) {
      out.add(c.completion());
    }
    return out;
  }

  /** The SFT examples of every accepted episode, in episode order. */
  public static List<SftExample> acceptedSftExamples(List<EpisodeResult> episodes) {
    List<SftExample> out = new ArrayList<>();
    for (EpisodeResult e : episodes) {
      if (e.accepted()) {
        out.addAll(e.sftExamples());
      }
    }
    return out;
  }
}
