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

  /** The template that renders a chat for this model (HarnessContext.chat). */
  default whale.chat.ChatTemplate chatTemplate() {
    return whale.chat.ChatTemplate.builtin();
  }
}
