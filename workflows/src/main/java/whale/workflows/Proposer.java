package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Who proposes harness candidates ({@code harness.proposer}). */
public enum Proposer implements Spelled {
  /** The task's built-in template search (offline). */
  TEMPLATE("template"),
  /** An OpenAI-compatible chat-completions endpoint. */
  OPENAI("openai"),
  /** An external program run in a copy of the archive directory. */
  COMMAND("command");

  private final String json;

  Proposer(String json) {
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
   * The value spelled {@code json}; an error naming harness.proposer and the allowed values
   * otherwise.
   */
  @JsonCreator
  public static Proposer of(String json) {
    return Spelled.parse(Proposer.class, "harness.proposer", json);
  }
}
