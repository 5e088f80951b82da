package whale.workers;

import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;

/** A real WHALE run shrunk to seconds: tiny model, few problems, two rounds. */
final class TinyRun {
  private TinyRun() {}

  static final int PROMPTS = 8;
  static final int SAMPLES = 4;
  static final int HARNESS_PROBLEMS = 16;
  static final int CANDIDATES = 2;

  /**
   * 32 weight problems / 8 per step = 4 steps per epoch; E = 0.5 -> 2 steps; budget 1 epoch; test
   * every 0.5 epoch (2 steps).
   */
  static ExperimentSpec spec(String name) {
    return spec(name, "whale", "");
  }

  /** The same tiny run under {@code schedule}, with {@code extra} JSON members added (",\"workflow\": ..."). */
  static ExperimentSpec spec(String name, String schedule, String extra) {
    return SpecJson.parse("""
        {
          "name": "%s",
          "schedule": "%s",
          "seed": 7,
          "data": { "weightProblems": 32, "harnessProblems": %d, "testProblems": 12 },
          "model": { "dModel": 32, "layers": 1, "heads": 2, "pretrainSteps": 60,
                     "pretrainBatch": 32, "pretrainDocuments": 2000 },
          "rsft": { "promptsPerStep": %d, "samplesPerPrompt": %d, "minibatch": 32 },
          "phases": { "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2,
                      "weightBudgetEpochs": 1.0 },
          "harness": { "candidatesPerIteration": %d },
          "eval": { "k": 2, "everyEpochs": 0.5 }%s
        }
        """.formatted(name, schedule, HARNESS_PROBLEMS, PROMPTS, SAMPLES, CANDIDATES, extra));
  }
}
