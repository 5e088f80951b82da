package whale.workflows.activities;

import whale.workflows.ExperimentSpec;

/** Seeded pretraining of the base checkpoint on the task's generic format corpus. */
public record BaseModelRequest(TaskRef task, ExperimentSpec.ModelSpec model, long seed) {}
