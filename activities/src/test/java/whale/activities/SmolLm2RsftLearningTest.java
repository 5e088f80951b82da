package whale.activities;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.task.searchqa.SearchQaGenome;
import whale.task.searchqa.SearchQaRenderer;
import whale.model.gguf.ModelFetcher;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Seeds;

/**
 * RSFT on the real SmolLM2-135M-Instruct, through the real activities: seeded LoRA steps on a slice
 * of search QA's D_weight under a one-hop completion harness, and held-out mean@8 on D_test before
 * and after (the same evaluation seeds, so the difference is the training's).
 *
 * <p>Why search QA: this 135M model answers the math task's word problems almost never (1-3 % of
 * samples, one step or several, completion or chat; that leaves RSFT nothing to keep), but it reads
 * a retrieved sentence and names the entity asked for in about a fifth of its samples, often
 * wrapped in a sentence or followed by more text. What RSFT teaches in a few steps is the answer's
 * shape: the name alone, from the document.
 *
 * <p>Spread, measured on the project's 2-core Intel Xeon (AVX-512) under whale's CPU pins, 16 test
 * problems x 8 samples, two steps of 16 prompts x 8 samples, LoRA rank 16 on q/k/v/o, lr 1e-3:
 * seed 11 gave 0.086 -> 0.531 in two JVMs (bytes identical across processes: no spread between
 * processes); the RSFT seeds 12 and 13 gave 0.086 -> 0.398 and 0.086 -> 0.523. Another CPU computes
 * other floats, which acts like another seed: over seeds the effect ran +0.31 to +0.45 (a range
 * of 0.13). On an AMD EPYC Zen 4 (2026-12-07) seed 11 gave 0.086 -> 0.531 in six processes, and
 * 0.086 -> 0.352 in one CI run with the same step-1 rollouts: that one was garbage collection. The
 * LoRA scale was a scalar on a Java buffer closed before the backward pass that read it, so a
 * collection between forward and backward made the gradients wrong (see {@code whale.model.Scalars};
 * {@code HfGcDuringTrainingTest} now holds it). With {@code -DargLine="-Xmn2m -XX:+UseSerialGC"}
 * step 2 had accepted 26 of 128 and the test failed (0.086 -> 0.156); after the fix that storm and
 * {@code -Xmn4m -XX:+UseParallelGC} both give 0.086 -> 0.531 (25 and 45 accepted), as do the
 * fresh-clone CI runs of issue 20's note of 2026-12-07. The bar, +0.10, is under a third of the
 * smallest effect seen (+0.31, seed 12 on the Xeon). About 3.5 min, beside a CI run on the
 * other core. The math task's learning test on this model would have nothing to
 * keep; {@code HfRsftLearningTest} holds the same loop on a fixture.
 */
class SmolLm2RsftLearningTest {
  static final String MODEL = "smollm2-135m-instruct";
  static final TaskRef TASK = new TaskRef("searchqa", 1234, Integer.getInteger("sl.weight", 64), 8,
      Integer.getInteger("sl.test", 16));
  static final int STEPS = Integer.getInteger("sl.steps", 2);
  static final int PROMPTS = Integer.getInteger("sl.prompts", 16);
  static final int MINIBATCH = Integer.getInteger("sl.minibatch", 16);
  static final double LR = Double.parseDouble(System.getProperty("sl.lr", "1e-3"));
  static final long SEED = Long.getLong("sl.seed", 11);
  static final String GENOME = System.getProperty("sl.genome",
      "query=ENTITY;docs=1;chars=100;format=CONTEXT;hops=ONE;votes=1;parse=CLAUSE;maxNew=12");
  @TempDir static Path dir;

  @Test
  void seededRsftStepsRaiseHeldOutMeanAt8OnThePretrainedModel() throws IOException {
    try {
      ModelFetcher.path(ModelFetcher.known(MODEL), ModelFetcher.cacheRoot(null));
    } catch (IOException e) {
      fail("this test needs the real model: " + e.getMessage());
    }
    ExperimentSpec spec = SpecJson.parse("""
        {"task": "searchqa", "model": {"source": "huggingface", "name": "%s"},
         "rsft": {"finetune": "lora",
                  "lora": {"rank": 16, "alpha": 32, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]}}}
        """.formatted(MODEL));
    ActivityRuntime runtime = ActivityRuntime.open(dir.resolve("store"), ActivityRuntime.Mode.IN_PROCESS);
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    EvalActivitiesImpl eval = new EvalActivitiesImpl(runtime);
    long t0 = System.nanoTime();
    String base = weights.prepareBaseModel(BaseModelRequest.of(spec, TASK, 7));
    String harness = runtime.store().putString(SearchQaRenderer.render(SearchQaGenome.SPACE.parse(GENOME)));
    EpisodeSettings settings = new EpisodeSettings(0.7, 20, 16, 60);
    double before = eval.evaluate(new EvalRequest(TASK, base, harness, EvalRequest.Split.TEST, 8, 5, settings, "before"))
        .meanAtK();
    System.out.printf("SmolLM2 held-out mean@8 before %.3f (%.1f s)%n", before, (System.nanoTime() - t0) / 1e9);
    PersistentSampler sampler = new PersistentSampler(TASK.weightProblems(), 3, PersistentSampler.Position.START);
    String ckpt = base;
    List<String> steps = new ArrayList<>();
    for (int s = 1; s <= STEPS; s++) {
      RsftStepResult r = weights.rsftStep(new RsftStepRequest(TASK, ckpt, harness, s, sampler.next(PROMPTS), 8,
          0.5, MINIBATCH, LR, Seeds.mix(SEED, s), settings));
      ckpt = r.checkpointRef();
      steps.add(String.format("%d/%d accepted, train reward %.3f", r.accepted(), r.rollouts(), r.trainReward()));
      System.out.printf("SmolLM2 RSFT step %d: %s (%.1f s)%n", s, steps.get(s - 1),
          (System.nanoTime() - t0) / 1e9);
    }
    double after = eval.evaluate(new EvalRequest(TASK, ckpt, harness, EvalRequest.Split.TEST, 8, 5, settings, "after"))
        .meanAtK();
    System.out.printf("SmolLM2 RSFT: held-out mean@8 %.3f -> %.3f; steps %s (%.1f s in all)%n", before, after,
        steps, (System.nanoTime() - t0) / 1e9);
    assertTrue(before > 0.02, "the base answers sometimes: " + before);
    assertTrue(after > before + 0.10, "held-out mean@8 " + before + " -> " + after);
  }
}
