package whale.workflows;

import java.util.List;

/** A spec that must not run; every message names the offending field. */
public class InvalidSpecException extends IllegalArgumentException {
  private final List<String> problems;

  public InvalidSpecException(List<String> problems) {
    super("invalid experiment spec: " + String.join("; ", problems));
    this.problems = List.copyOf(problems);
  }

  public List<String> problems() {
    return problems;
  }
}
