package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How RSFT trains the model ({@code rsft.finetune}, or its default for the model source). */
public enum Finetune implements Spelled {
  /** Every weight (the builtin model's only mode). */
  FULL("full"),
  /** LoRA adapters on a frozen base (the default for a Hugging Face model). */
  LORA("lora");

  private final String json;

  Finetune(String json) {
    this.json = json;
  }

  @JsonValue
  @Override
  public String json() {
    return json;
  }

  @Override
  public String toString() {
    return json;
  }

  /**
   * The value spelled {@code json}; an error naming rsft.finetune and the allowed values otherwise.
   */
  @JsonCreator
  public static Finetune of(String json) {
    return Spelled.parse(Finetune.class, "rsft.finetune", json);
  }
}
