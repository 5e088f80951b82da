package whale.workflows.activities;

import com.fasterxml.jackson.annotation.JsonInclude;
import whale.workflows.ExperimentSpec;
import whale.workflows.Finetune;

/**
 * The base checkpoint: seeded pretraining of the builtin model on the task's generic format
 * corpus, or a Hugging Face directory as it is.
 *
 * @param finetune Hugging Face only: how RSFT trains it (full or lora), part of the base reference
 *     because a LoRA run starts from fresh adapters seeded by {@code seed}; null for builtin
 * @param lora Hugging Face with lora only: the adapters' settings
 */
public record BaseModelRequest(
    TaskRef task,
    ExperimentSpec.ModelSpec model,
    long seed,
    // Absent for builtin, so its memo key is what it was before these fields existed.
    @JsonInclude(JsonInclude.Include.NON_NULL) Finetune finetune,
    @JsonInclude(JsonInclude.Include.NON_NULL) ExperimentSpec.LoraSpec lora) {

  /** The builtin model's pretraining. */
  public BaseModelRequest(TaskRef task, ExperimentSpec.ModelSpec model, long seed) {
    this(task, model, seed, null, null);
  }

  /** The base of {@code spec}'s run. */
  public static BaseModelRequest of(ExperimentSpec spec, TaskRef task, long seed) {
    if (!spec.model().usesHuggingFace()) {
      return new BaseModelRequest(task, spec.model(), seed);
    }
    Finetune finetune = spec.finetune();
    return new BaseModelRequest(task, spec.model(), seed, finetune,
        finetune == Finetune.LORA ? spec.lora() : null);
  }
}
