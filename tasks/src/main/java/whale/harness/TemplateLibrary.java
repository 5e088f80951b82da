package whale.harness;

import java.util.List;

/**
 * A task's built-in, offline, deterministic harness proposer: its starting harness h0 and how it
 * writes new candidates after reading the archive. One per task ({@code TaskCatalog}).
 */
public interface TemplateLibrary {
  /** h0: the task's deliberately unoptimised starting harness. */
  HarnessCandidate initial();

  /**
   * h0 in {@code form} (spec harness.initialForm): the same starting genome, its question put to
   * the model in that form. COMPLETION is {@link #initial()}.
   *
   * @throws IllegalArgumentException for a form the task's templates do not write
   */
  default HarnessCandidate initial(HarnessForm form) {
    if (form == HarnessForm.COMPLETION) {
      return initial();
    }
    throw new IllegalArgumentException("this task's templates have no "
        + form.name().toLowerCase(java.util.Locale.ROOT) + " form of h0");
  }

  /**
   * Up to {@code m} new candidates, deterministic for (archive, m, seed).
   *
   * @param promptOnly the Fast-Slow control: change only prompt text (string literals) of the
   *     incoming harness; any other difference is rejected by the candidate validator
   */
  List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly);

  /**
   * As {@link #propose(ArchiveView, int, long, boolean)}; {@code chatForm} (spec
   * {@code harness.chatForm}) lets the search also write chat-form harnesses: every built-in task's
   * genome has a FORM axis (math also a TOOLS form). A library without chat variants ignores it.
   */
  default List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly,
      boolean chatForm) {
    return propose(archive, m, seed, promptOnly);
  }
}
