package whale.task.searchqa;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.HeldOutRise;
import whale.task.searchqa.SearchQaGenome;
import whale.task.searchqa.SearchQaRenderer;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.TaskRef;

/**
 * The real DJL model on the built-in search-QA task: a pretrained base model, 16 seeded RSFT steps
 * under a two-hop harness, and held-out mean@8 before and after.
 *
 * <p>What RSFT teaches here is a skill, not facts: the fact world's names are random strings, so an
 * answer is right only when the model copies the name out of the retrieved document, and what
 * transfers to D_test is copying better. It needs a base that copies some of the time. Measured
 * on 2 cores, one intra-op thread: 1300 pretraining steps, held-out 0.563 -> 0.619 alone and 0.570
 * -> 0.609 in the full suite's JVM; 1000 steps, 0.203 -> 0.207 (that base writes invented names
 * for most questions, so few accepted rollouts hold a copied name; the test then fails). The
 * 0.570 of a full suite was the GC bug of issue 14 ({@code whale.model.Scalars}); since its fix three
 * JVMs (a full suite, two fresh-clone CI runs) all gave 0.563 -> 0.619: no spread across processes,
 * and the effect is nearly three times the +0.02 bar. Those were under MKL's own dispatch; under
 * whale's default CPU pins (issue 25, {@code CpuPins}) a fresh-clone CI run gave 0.393 -> 0.531,
 * seven times the bar (1304 s beside the rest of the module: MKL's compatible SGEMM is slower),
 * on an AMD EPYC; the same pins on an Intel Xeon (AVX-512), which computes other floats, gave
 * 0.520 -> 0.578 (fresh-clone CI, 2026-12-04). One seed is one draw: the smallest of the three
 * effects seen, +0.056, is still near three times the bar.
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
    var model = ExperimentSpec.ModelSpec.builtin(160, 64, 2, 4, Integer.getInteger("sq.pretrain", 1300), 48,
        0.008, 20000);
    HeldOutRise r = HeldOutRise.measure(dir.resolve("store"), TASK, model,
        SearchQaRenderer.render(SearchQaGenome.SPACE.parse(GENOME)), STEPS, LR);
    assertTrue(r.before() > 0, "the base model answers sometimes");
    // the same evaluation seeds before and after: the difference is the training's
    assertTrue(r.after() > r.before() + 0.02, "held-out mean@8 " + r.before() + " -> " + r.after());
  }
}
