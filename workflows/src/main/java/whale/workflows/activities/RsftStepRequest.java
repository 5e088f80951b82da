package whale.workflows.activities;

import java.util.List;

/**
 * One online RSFT step. Everything that determines the result is in here, so the step is a pure
 * function of its request and a retry returns the same checkpoint.
 *
 * @param step global step number (1-based), for names and summaries
 * @param problems indices into D_weight chosen by the persistent sampler
 */
public record RsftStepRequest(
    TaskRef task,
    String checkpointRef,
    String harnessRef,
    int step,
    List<Integer> problems,
    int samplesPerPrompt,
    double acceptThreshold,
    int minibatch,
    double learningRate,
    long seed,
    EpisodeSettings episodes) {}
