package whale.activities;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
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
 * Search QA learns under RSFT with a real DJL model: episodes run in sandbox processes whose search
 * calls the worker serves from its Lucene index, and a few seeded steps raise held-out mean@k.
 */
class SearchQaRsftTest {
  @TempDir static Path dir;

  @Test
  void heldOutAccuracyRisesAfterAFewSeededSteps() {
    ActivityRuntime runtime = ActivityRuntime.open(dir.resolve("store"));
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    EvalActivitiesImpl eval = new EvalActivitiesImpl(runtime);
    TaskRef task = new TaskRef("searchqa", 1234, 128, 8, 48);
    var model = new ExperimentSpec.ModelSpec(160, 64, 2, 4, 300, 32, 0.008, 10000, null);
    String base = weights.prepareBaseModel(new BaseModelRequest(task, model, 7));
    String harness = runtime.store().putString(SearchQaRenderer.render(SearchQaGenome.parse(
        "query=RAW;docs=1;chars=100;format=DQA;hops=ONE;votes=1;parse=LINE;maxNew=24")));
    EpisodeSettings cooler = new EpisodeSettings(0.7, 20, 16, 30);
    MeanAtKResult m0 = eval.evaluate(new EvalRequest(task, base, harness, "test", 4, 5, cooler, "before"));
    PersistentSampler sampler = new PersistentSampler(task.weightProblems(), 3, PersistentSampler.Position.START);
    String ckpt = base;
    List<Double> rewards = new ArrayList<>();
    for (int s = 1; s <= 8; s++) { // two epochs of D_weight
      RsftStepResult r = weights.rsftStep(new RsftStepRequest(task, ckpt, harness, s, sampler.next(32), 8, 0.5,
          32, 1e-4, Seeds.mix(11, s), cooler));
      ckpt = r.checkpointRef();
      rewards.add(r.trainReward());
    }
    MeanAtKResult m1 = eval.evaluate(new EvalRequest(task, ckpt, harness, "test", 4, 5, cooler, "after"));
    System.out.printf("searchqa held-out mean@4 %.3f -> %.3f; train reward per step %s%n", m0.meanAtK(),
        m1.meanAtK(), rewards);
    assertTrue(m0.meanAtK() > 0, "the base model answers some questions from the retrieved document");
    assertTrue(m1.meanAtK() > m0.meanAtK(), "held-out mean@4 " + m0.meanAtK() + " -> " + m1.meanAtK());
  }
}
