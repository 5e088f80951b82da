package whale.workflows.activities;

/**
 * Sample {@code k} episodes per problem of a split under a checkpoint and a harness.
 *
 * @param split "test" for mean@k reporting, "harness" for scoring harness candidates
 * @param label a human label for summaries and traces ("round 2 weight phase end")
 */
public record EvalRequest(
    TaskRef task,
    String checkpointRef,
    String harnessRef,
    String split,
    int k,
    long seed,
    EpisodeSettings episodes,
    String label) {}
