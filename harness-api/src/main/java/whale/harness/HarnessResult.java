package whale.harness;

import java.util.List;

/** A harness's final answer and optional notes. */
public record HarnessResult(String answer, List<String> notes) {
  public HarnessResult {
    if (notes == null) {
      notes = List.of();
    } else {
      java.util.ArrayList<String> copy = new java.util.ArrayList<>(notes.size());
      for (String n : notes) {
        copy.add(String.valueOf(n));
      }
      notes = java.util.Collections.unmodifiableList(copy);
    }
  }

  public static HarnessResult of(String answer) {
    return new HarnessResult(answer, List.of());
  }
}
