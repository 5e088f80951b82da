package whale.task.chess;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.activities.EvalActivitiesImpl;
import whale.activities.WeightActivitiesImpl;
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
 * The real DJL model on the built-in chess task: a briefly pretrained base model, a few seeded RSFT
 * steps under a piece-list harness, and held-out mean@8 before and after.
 */
class ChessLearningTest {
  @TempDir static Path dir;
  static final TaskRef TASK = new TaskRef("chess", 1234, 256, 16, 64);
  static final int STEPS = Integer.getInteger("chess.steps", 8);
  static final double LR = Double.parseDouble(System.getProperty("chess.lr", "5e-4"));

  @Test
  void heldOutMateRateRisesAfterAFewSeededRsftSteps() {
    // In-process episodes keep this test cheap; ChessTemplatesTest runs the templates in the sandbox.
    ActivityRuntime runtime = ActivityRuntime.open(dir.resolve("store"), ActivityRuntime.Mode.IN_PROCESS);
    WeightActivitiesImpl weights = new WeightActivitiesImpl(runtime);
    EvalActivitiesImpl eval = new EvalActivitiesImpl(runtime);
    // A short context fits the piece-list prompts; a short pretraining leaves the base weak.
    var model = new ExperimentSpec.ModelSpec(64, 64, 2, 4, Integer.getInteger("chess.pretrain", 400), 64,
        0.008, 8000, null);
    long t0 = System.nanoTime();
    String base = weights.prepareBaseModel(new BaseModelRequest(TASK, model, 7));
    System.out.printf("chess base model %.1f s%n", (System.nanoTime() - t0) / 1e9);
    String harness = runtime.store().putString(ChessTemplates.render(new ChessGenome(ChessGenome.Board.PIECES,
        ChessGenome.Cue.MATE, 1, 0, ChessGenome.Parsing.FIRST_MOVE)));
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
    System.out.printf("chess held-out mean@8 %.3f -> %.3f; train reward per step %s (%.1f s in all)%n",
        m0.meanAtK(), m1.meanAtK(), rewards, (System.nanoTime() - t0) / 1e9);
    assertTrue(m0.meanAtK() > 0, "the base model mates sometimes");
    // the same evaluation seeds before and after: the difference is the training's
    assertTrue(m1.meanAtK() > m0.meanAtK() + 0.02, "held-out mean@8 " + m0.meanAtK() + " -> " + m1.meanAtK());
  }
}
