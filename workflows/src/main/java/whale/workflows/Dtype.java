package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * A Hugging Face model's base weight type ({@code model.dtype}); the model module's {@code
 * HfModel.Placement.Dtype} has the same spellings (HfPolicyTest keeps them equal).
 */
public enum Dtype implements Spelled {
  /** The default. */
  FLOAT32("float32"),
  /** For the frozen base under LoRA (adapters and their AdamW state stay float32). */
  FLOAT16("float16");

  private final String json;

  Dtype(String json) {
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
   * The value spelled {@code json}; an error naming model.dtype and the allowed values otherwise.
   */
  @JsonCreator
  public static Dtype of(String json) {
    return Spelled.parse(Dtype.class, "model.dtype", json);
  }
}
