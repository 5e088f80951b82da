package whale.activities;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Seeds;

/**
 * The learning tests' shared run: pretrain a base model (through {@link SharedBases}, so a class
 * asking for a base another class already trained in this JVM reads it), score held-out mean@8
 * under one harness, take seeded RSFT steps (32 prompts x 8 samples, minibatch 32, T 0.7), score
 * again with the same evaluation seeds. Episodes run in process to keep it cheap.
 */
public record HeldOutRise(double before, double after, List<Double> trainRewards) {

  public static HeldOutRise measure(Path store, TaskRef task, ExperimentSpec.ModelSpec model,
      String harnessSource, int steps, double lr) {
    ActivityRuntime runtime = ActivityRuntime.open(store, ActivityRuntime.Mode.IN_PROCESS);
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    EvalActivitiesImpl eval = new EvalActivitiesImpl(runtime);
    long t0 = System.nanoTime();
    String base = SharedBases.base(runtime, new BaseModelRequest(task, model, 7));
    System.out.printf("%s base model %.1f s%n", task.name(), (System.nanoTime() - t0) / 1e9);
    String harness = runtime.store().putString(harnessSource);
    EpisodeSettings settings = new EpisodeSettings(0.7, 20, 16, 30);
    double m0 = eval.evaluate(new EvalRequest(task, base, harness, EvalRequest.Split.TEST, 8, 5, settings, "before")).meanAtK();
    PersistentSampler sampler = new PersistentSampler(task.weightProblems(), 3, PersistentSampler.Position.START);
    String ckpt = base;
    List<Double> rewards = new ArrayList<>();
    for (int s = 1; s <= steps; s++) {
      RsftStepResult r = weights.rsftStep(new RsftStepRequest(task, ckpt, harness, s, sampler.next(32), 8, 0.5,
          32, lr, Seeds.mix(11, s), settings));
      ckpt = r.checkpointRef();
      rewards.add(r.trainReward());
    }
    double m1 = eval.evaluate(new EvalRequest(task, ckpt, harness, EvalRequest.Split.TEST, 8, 5, settings, "after")).meanAtK();
    System.out.printf("%s held-out mean@8 %.3f -> %.3f; train reward per step %s (%.1f s in all)%n",
        task.name(), m0, m1, rewards, (System.nanoTime() - t0) / 1e9);
    return new HeldOutRise(m0, m1, List.copyOf(rewards));
  }
}
