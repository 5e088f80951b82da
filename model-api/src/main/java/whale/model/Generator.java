package whale.model;

import java.util.List;

/** Anything that completes a batch of prompts in one go: the model, or its gRPC service. */
public interface Generator {
  /** Completions in the order of {@code requests}. */
  List<Completion> generate(List<GenerationRequest> requests, SamplingParams params);

  /** What an episode's model call may ask of this model. */
  default ModelLimits limits() {
    return ModelLimits.BUILTIN;
  }

  /**
   * For a model that samples a whole batch at one temperature: {@code batch} is called once per
   * distinct temperature (a request's own, else {@code params}'), in first-seen order, and the
   * completions come back in the order of {@code requests}. A row's completion never depends on
   * what shares its batch, so the grouping changes nothing else.
   */
  static List<Completion> byTemperature(List<GenerationRequest> requests, SamplingParams params,
      java.util.function.BiFunction<List<GenerationRequest>, SamplingParams, List<Completion>> batch) {
    java.util.Map<Double, List<Integer>> groups = new java.util.LinkedHashMap<>();
    for (int i = 0; i < requests.size(); i++) {
      Double t = requests.get(i).temperature();
      groups.computeIfAbsent(t == null ? params.temperature() : t, k -> new java.util.ArrayList<>()).add(i);
    }
    if (groups.size() == 1 && groups.containsKey(params.temperature())) {
      return batch.apply(requests, params);
    }
    Completion[] out = new Completion[requests.size()];
    for (var e : groups.entrySet()) {
      List<GenerationRequest> rows = new java.util.ArrayList<>(e.getValue().size());
      for (int i : e.getValue()) {
        rows.add(requests.get(i));
      }
      List<Completion> done = batch.apply(rows, new SamplingParams(e.getKey(), params.topK()));
      for (int j = 0; j < rows.size(); j++) {
        out[e.getValue().get(j)] = done.get(j);
      }
    }
    return java.util.Arrays.asList(out);
  }

  /**
   * Native memory this model holds of its own, that closing it frees (what a cache of loaded models
   * counts against its byte budget); 0 for a model too small to matter.
   */
  default long residentBytes() {
    return 0;
  }

  /** The template that renders a chat for this model (HarnessContext.chat). */
  default whale.chat.ChatTemplate chatTemplate() {
    return whale.chat.ChatTemplate.builtin();
  }
}
