package whale.task.searchqa;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.activities.EvalActivitiesImpl;
import whale.activities.WeightActivitiesImpl;
import whale.harness.searchqa.SearchQaGenome;
import whale.harness.searchqa.SearchQaRenderer;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.MeanAtKResult;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Seeds;

/**
 * The real DJL model on the built-in search-QA task: a pretrained base model, 16 seeded RSFT steps
 * under a two-hop harness, and held-out mean@8 before and after.
 *
 * <p>What RSFT teaches here is a skill, not facts: the fact world's names are random strings, so an
 * answer is right only when the model copies the name out of the retrieved document, and what
 * transfers to D_test is copying better. It needs a base that copies some of the time. Measured
 * on 2 cores, one intra-op thread: 1300 pretraining steps, held-out 0.563 -> 0.619 alone and 0.570
 * -> 0.609 in the full suite's JVM; 1000 steps, 0.203 -> 0.207 (that base writes invented names
 * for most questions, so few accepted rollouts hold a copied name; the test then fails).
 */
class SearchQaLearningTest {
  @TempDir static Path dir;
  static final TaskRef TASK = new TaskRef("searchqa", 1234, 256, 16, 64);
  static final int STEPS = Integer.getInteger("sq.steps", 16);
  static final double LR = Double.parseDouble(System.getProperty("sq.lr", "3e-4"));
  // The search finds the entity's document first; hop 2 asks the original question, so two-hop
  // questions are rarely solved and the gain is on one-hop ones.
  static final String GENOME = "query=ENTITY;docs=2;chars=100;format=DQA;hops=TWO;votes=1;parse=LINE;maxNew=12";

  @Test
  void heldOutAccuracyRisesAfterAFewSeededRsftSteps() {
    // In-process episodes keep this test cheap; SearchQaRsftTest runs them in sandboxes.
    ActivityRuntime runtime = ActivityRuntime.open(dir.resolve("store"), ActivityRuntime.Mode.IN_PROCESS);
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    EvalActivitiesImpl eval = new EvalActivitiesImpl(runtime);
    var model = new ExperimentSpec.ModelSpec(160, 64, 2, 4, Integer.getInteger("sq.pretrain", 1300), 48,
        0.008, 20000, null);
    long t0 = System.nanoTime();
    String base = weights.prepareBaseModel(new BaseModelRequest(TASK, model, 7));
    System.out.printf("searchqa base model %.1f s%n", (System.nanoTime() - t0) / 1e9);
    String harness = runtime.store().putString(SearchQaRenderer.render(SearchQaGenome.parse(GENOME)));
    EpisodeSettings settings = new EpisodeSettings(0.7, 20, 16, 30);
    MeanAtKResult m0 = eval.evaluate(new EvalRequest(TASK, base, harness, "test", 8, 5, settings, "before"));
    PersistentSampler sampler = new PersistentSampler(TASK.weightProblems(), 3, PersistentSampler.Position.START);
    String ckpt = base;
    List<Double> rewards = new ArrayList<>();
    for (int s = 1; s <= STEPS; s++) {
      RsftStepResult r = weights.rsftStep(new RsftStepRequest(TASK, ckpt, harness, s, sampler.next(32), 8, 0.5,
          32, LR, Seeds.mix(11, s), settings));
      ckpt = r.checkpointRef();
      rewards.add(r.trainReward());
    }
    MeanAtKResult m1 = eval.evaluate(new EvalRequest(TASK, ckpt, harness, "test", 8, 5, settings, "after"));
    System.out.printf("searchqa held-out mean@8 %.3f -> %.3f; train reward per step %s (%.1f s in all)%n",
        m0.meanAtK(), m1.meanAtK(), rewards, (System.nanoTime() - t0) / 1e9);
    assertTrue(m0.meanAtK() > 0, "the base model answers sometimes");
    // the same evaluation seeds before and after: the difference is the training's
    assertTrue(m1.meanAtK() > m0.meanAtK() + 0.02, "held-out mean@8 " + m0.meanAtK() + " -> " + m1.meanAtK());
  }
}
