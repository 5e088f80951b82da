package whale.task;

import java.util.List;

/** A task domain: its splits, its binary verifier, its tools and the corpus its base model is pretrained on. */
public interface Task {
  String name();

  /** The problems of one split, in a fixed order; the splits are disjoint by question text. */
  List<TaskProblem> split(Split split);

  /** Binary verifier: 1.0 when {@code answer} is accepted for {@code problem}, else 0.0. */
  double verify(TaskProblem problem, String answer);

  /**
   * The verifier as every scorer calls it (episode runner, sandbox host, so RSFT acceptance, harness
   * scoring and test): with the model completions of the episode's trace, for tasks whose rule looks
   * at them (chess: the harness must not choose moves, so each answer move must appear in some
   * completion). By default the trace does not matter.
   */
  default double verify(TaskProblem problem, String answer, List<String> completions) {
    return verify(problem, answer);
  }

  /** Tools a harness may call by name. */
  List<Tool> tools();

  /**
   * Documents of the generic pretraining corpus (each a short text ending in a newline), deterministic
   * for {@code seed}; they never contain a split's question.
   */
  List<String> pretrainingCorpus(long seed, int documents);

  /**
   * The corpus the spec's {@code model.pretrainCorpus} names: null for the generic one above; a task
   * without the named corpus refuses it.
   */
  default List<String> pretrainingCorpus(long seed, int documents, String corpus) {
    if (corpus == null) {
      return pretrainingCorpus(seed, documents);
    }
    throw new IllegalArgumentException("model.pretrainCorpus: the " + name() + " task has no '"
        + corpus + "' corpus");
  }

  /**
   * Whether {@code answer} has the form an answer must have (for math: an integer), whether or not it
   * is correct. Trace statistics count the rest as unparseable.
   */
  default boolean wellFormed(String answer) {
    return answer != null && !answer.isBlank();
  }

  /** The tool named {@code name}, or null. */
  default Tool tool(String name) {
    for (Tool t : tools()) {
      if (t.name().equals(name)) {
        return t;
      }
    }
    return null;
  }
}
