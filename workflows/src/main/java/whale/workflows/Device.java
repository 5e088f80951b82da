package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * Where a Hugging Face model runs ({@code model.device}); the model module's {@code
 * HfModel.Placement.Device} has the same spellings (HfPolicyTest keeps them equal).
 */
public enum Device implements Spelled {
  /** The default. */
  CPU("cpu"),
  /** A GPU, which the worker must see. */
  CUDA("cuda");

  private final String json;

  Device(String json) {
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
   * The value spelled {@code json}; an error naming model.device and the allowed values otherwise.
   */
  @JsonCreator
  public static Device of(String json) {
    return Spelled.parse(Device.class, "model.device", json);
  }
}
