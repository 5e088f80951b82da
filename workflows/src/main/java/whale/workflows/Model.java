package whale.workflows;

import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.PersistentSampler;

/**
 * What the run builds on: the current weights, the current harness, and where the persistent
 * sampler stands in D_weight (so that the next step draws the next batch).
 */
public record Model(String checkpointRef, CandidateInfo harness, PersistentSampler.Position sampler) {
  Model withCheckpoint(String ref) {
    return new Model(ref, harness, sampler);
  }

  Model withHarness(CandidateInfo h) {
    return new Model(checkpointRef, h, sampler);
  }
}
