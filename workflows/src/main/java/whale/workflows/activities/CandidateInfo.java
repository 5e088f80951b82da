package whale.workflows.activities;

/**
 * A harness candidate written by a proposer: its metadata, its source (by reference) and whether it
 * passed validation (compiles, implements the harness interface, obeys the allow-list).
 */
public record CandidateInfo(
    String name,
    String hypothesis,
    String changes,
    String axis,
    String sourceRef,
    boolean valid,
    String error) {}
