package whale.workflows.activities;

/**
 * One candidate in the current harness phase's archive, with its scores once scored.
 *
 * @param iteration the harness iteration that produced it (1 = the incoming harness)
 * @param score null when the candidate was invalid
 */
public record ArchiveEntry(int iteration, CandidateInfo candidate, MeanAtKResult score) {}
