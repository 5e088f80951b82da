package whale.harness;

import whale.task.Problem;

/**
 * The code that drives the model on one problem: it builds prompts, calls the model and tools through
 * {@link HarnessContext}, and parses the final answer. The model must do the task's reasoning; the
 * harness only rewrites and formats text.
 */
public interface Harness {
  HarnessResult solve(Problem problem, HarnessContext ctx) throws Exception;
}
