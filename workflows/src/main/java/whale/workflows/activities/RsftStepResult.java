package whale.workflows.activities;

/**
 * What an RSFT step did.
 *
 * @param checkpointRef the new checkpoint (the input one when nothing was accepted)
 * @param trainReward mean verifier reward over the step's rollouts: the adaptive rule's signal
 * @param accepted rollouts with reward above the threshold
 * @param rollouts rollouts sampled (prompts x samples)
 * @param sftExamples model calls trained on (an accepted rollout may hold several)
 * @param loss mean completion-token NLL of the SFT epoch (0 when skipped)
 * @param rolloutsRef the step's rollouts and traces in the artifact store
 */
public record RsftStepResult(
    String checkpointRef,
    double trainReward,
    int accepted,
    int rollouts,
    int sftExamples,
    double loss,
    String rolloutsRef) {}
