package whale.task.chess;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.HeldOutRise;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.TaskRef;

/**
 * The real DJL model on the built-in chess task: a briefly pretrained base model, a few seeded RSFT
 * steps under a piece-list harness, and held-out mean@8 before and after.
 *
 * <p>Spread: across processes none (seeded training is byte-identical in every JVM of one CPU
 * kind, issue 14), so one seed is one draw, reused forever, and the spread that matters is across
 * seeds and CPU kinds (issue 25: they compute other floats). 8 steps at 5e-4 gave +0.21 (0.148 ->
 * 0.359) unpinned and +0.066 (0.104 -> 0.170) pinned on an AMD EPYC, but -0.012 (0.119 -> 0.107)
 * pinned on an Intel Xeon, where data seeds 1 and 2 gave +0.23 and +0.27. Hence 16 steps at 1e-3,
 * measured on the Xeon over data seeds 1234, 1, 2 ({@code -Dchess.seed}): 0.119 -> 0.305, 0.188 ->
 * 0.496, 0.227 -> 0.623, i.e. +0.19, +0.31, +0.40 (mean 0.30, sd 0.10). The bar, +0.05, is a
 * quarter of the smallest.
 */
class ChessLearningTest {
  @TempDir static Path dir;
  static final TaskRef TASK = new TaskRef("chess", Long.getLong("chess.seed", 1234), 256, 16, 64);
  static final int STEPS = Integer.getInteger("chess.steps", 16);
  static final double LR = Double.parseDouble(System.getProperty("chess.lr", "1e-3"));

  @Test
  void heldOutMateRateRisesAfterAFewSeededRsftSteps() {
    // In-process episodes keep this test cheap; ChessTemplatesTest runs the templates in the sandbox.
    // A short context fits the piece-list prompts; a short pretraining leaves the base weak.
    var model = ExperimentSpec.ModelSpec.builtin(64, 64, 2, 4, Integer.getInteger("chess.pretrain", 400), 64,
        0.008, 8000);
    HeldOutRise r = HeldOutRise.measure(dir.resolve("store"), TASK, model, ChessTemplates.render(new ChessGenome(
        ChessGenome.Board.PIECES, ChessGenome.Cue.MATE, 1, 0, ChessGenome.Parsing.FIRST_MOVE)), STEPS, LR);
    assertTrue(r.before() > 0, "the base model mates sometimes");
    // the same evaluation seeds before and after: the difference is the training's
    assertTrue(r.after() > r.before() + 0.05, "held-out mean@8 " + r.before() + " -> " + r.after());
  }
}
