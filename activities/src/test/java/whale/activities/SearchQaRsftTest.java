package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeStatus;
import whale.harness.ToolCall;
import whale.task.searchqa.SearchQaGenome;
import whale.task.searchqa.SearchQaRenderer;
import whale.store.ArtifactStore;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EpisodeSettings;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.MeanAtKResult;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.Seeds;

/**
 * Search QA through the real activities: episodes run in sandbox processes, whose search calls the
 * worker serves from its Lucene index, for RSFT steps and evaluation alike.
 *
 * <p>The held-out rise under RSFT is {@code whale.task.searchqa.SearchQaLearningTest}'s (in-process
 * episodes, a base pretrained long enough to copy some names).
 */
class SearchQaRsftTest {
  @TempDir static Path dir;

  @Test
  void rsftAndEvaluationRunSearchingEpisodesInSandboxes() throws Exception {
    ActivityRuntime runtime = ActivityRuntime.open(dir.resolve("store"));
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    EvalActivitiesImpl eval = new EvalActivitiesImpl(runtime);
    TaskRef task = new TaskRef("searchqa", 1234, 32, 8, 8);
    var model = ExperimentSpec.ModelSpec.builtin(128, 32, 1, 2, 20, 16, 0.008, 500);
    String base = SharedBases.base(runtime, new BaseModelRequest(task, model, 7));
    String harness = runtime.store().putString(SearchQaRenderer.render(SearchQaGenome.SPACE.parse(
        "query=ENTITY;docs=2;chars=100;format=DQA;hops=TWO;votes=1;parse=LINE;maxNew=12")));
    EpisodeSettings settings = new EpisodeSettings(0.7, 20, 16, 30);

    RsftStepResult step = weights.rsftStep(new RsftStepRequest(task, base, harness, 1, List.of(0, 1, 2, 3), 2,
        0.5, 32, 1e-4, Seeds.mix(11, 1), settings));
    assertEquals(8, step.rollouts());
    List<EpisodeResult> rollouts = read(runtime, step.rolloutsRef());
    assertSearched(rollouts);
    assertEquals(step.accepted() == 0, base.equals(step.checkpointRef()), "no accepted rollout, no update");

    MeanAtKResult m = eval.evaluate(new EvalRequest(task, step.checkpointRef(), harness,
        EvalRequest.Split.TEST, 2, 5, settings, "test"));
    assertEquals(16, m.rollouts());
    assertSearched(read(runtime, m.tracesRef()));
  }

  /** Every episode completed and searched (twice when the model named a bridge) with results back. */
  private static void assertSearched(List<EpisodeResult> episodes) {
    assertFalse(episodes.isEmpty());
    for (EpisodeResult e : episodes) {
      assertEquals(EpisodeStatus.COMPLETED, e.status(), e.error());
      assertTrue(e.toolCalls().size() >= 1 && e.toolCalls().size() <= 2, e.toolCalls().toString());
      ToolCall first = e.toolCalls().get(0);
      assertEquals("search", first.name());
      assertFalse(first.output().isBlank(), "the worker's index answered " + first.input());
      assertTrue(e.modelCalls().get(0).prompt().contains(first.output().split("\n")[0].substring(0, 20)),
          "the prompt shows the retrieved document");
    }
  }

  private static List<EpisodeResult> read(ActivityRuntime runtime, String ref) throws Exception {
    return ArtifactStore.json().readValue(runtime.store().path(ref).toFile(),
        new TypeReference<List<EpisodeResult>>() {});
  }
}
