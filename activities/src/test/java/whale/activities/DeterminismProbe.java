package whale.activities;

import java.nio.file.Path;
import java.util.List;
import whale.task.math.MathGenome;
import whale.task.math.MathTemplates;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.Seeds;

/**
 * One process of {@link CrossProcessDeterminismTest}: seeded pretraining and one RSFT step whose
 * episodes run in the sandbox pool (two processes, batches cut by timing), into a fresh store given
 * as the argument. Prints the content references, which are the sha256 of the bytes.
 */
public final class DeterminismProbe {
  static final TaskRef TASK = new TaskRef("math", 1234, 256, 16, 128);
  /** Also {@link WeightActivitiesTest}'s base: the probes' agreed bytes go to {@link SharedBases}. */
  static final BaseModelRequest BASE = new BaseModelRequest(TASK,
      ExperimentSpec.ModelSpec.builtin(160, 64, 2, 4, 400, 64, 0.008, 30000), 7);

  public static void main(String[] args) {
    ActivityRuntime runtime = ActivityRuntime.open(Path.of(args[0]));
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    long gc0 = collections();
    String base = weights.prepareBaseModel(BASE);
    long gc1 = collections();
    String chain = runtime.store().putString(MathTemplates.render(MathGenome.SPACE.parse(
        "format=QA;decomp=CHAIN;votes=1;retries=0;parse=FIRST_INT;maxNew=8")));
    RsftStepResult r = weights.rsftStep(new RsftStepRequest(TASK, base, chain, 1,
        List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 8, 0.5, 32, 1e-4,
        Seeds.mix(11, 1), new EpisodeSettings(1.0, 20, 16, 30)));
    long gc2 = collections();
    System.out.println("gc pretrain=" + (gc1 - gc0) + " step=" + (gc2 - gc1));
    System.out.println("base=" + base);
    System.out.println("step=" + r.checkpointRef() + " accepted=" + r.accepted()
        + " rollouts=" + r.rolloutsRef());
    System.exit(0); // the sandbox pool's processes go with the shutdown hook
  }

  /** Garbage collections so far, all collectors. */
  static long collections() {
    long n = 0;
    for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, gc.getCollectionCount());
    }
    return n;
  }
}
