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
   * What RSFT trains on from this episode ({@link Trajectory}): one example per generate call (the
   * prompt the harness built masked out, the completion trained, its terminating newline included),
   * one per chat conversation (the model's turns trained). The builtin model's template by default.
   */
  public List<SftExample> sftExamples() {
    return sftExamples(whale.chat.ChatTemplate.builtin());
  }

  public List<SftExample> sftExamples(whale.chat.ChatTemplate template) {
    return Trajectory.examples(modelCalls, template);
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
