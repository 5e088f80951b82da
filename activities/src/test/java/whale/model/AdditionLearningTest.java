package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * Real learning, end to end: pretrain on "a+b=c\n" lines, then greedy decoding must get held-out
 * sums right. Also prints the throughput numbers the system is sized by.
 */
class AdditionLearningTest {
  static final int STEPS = Integer.getInteger("steps", 1500);
  static final int BATCH = Integer.getInteger("batch", 64);
  static final float LR = Float.parseFloat(System.getProperty("lr", "3e-3"));

  @Test
  void learnsTwoDigitAdditionAndGeneralisesToUnseenSums() throws Exception {
    List<String> train = new ArrayList<>();
    List<int[]> heldOut = new ArrayList<>();
    List<int[]> pairs = new ArrayList<>();
    for (int a = 0; a < 100; a++) {
      for (int b = 0; b < 100; b++) {
        pairs.add(new int[] {a, b});
      }
    }
    Collections.shuffle(pairs, new Random(0));
    for (int i = 0; i < pairs.size(); i++) {
      int[] p = pairs.get(i);
      if (i < 200) {
        heldOut.add(p);
      } else {
        train.add(p[0] + "+" + p[1] + "=" + (p[0] + p[1]) + "\n");
      }
    }
    List<GenerationRequest> questions = new ArrayList<>();
    for (int i = 0; i < heldOut.size(); i++) {
      int[] p = heldOut.get(i);
      questions.add(new GenerationRequest(p[0] + "+" + p[1] + "=", i, 5));
    }

    // Train on a worker thread, as a Temporal activity would: PyTorch's grad mode is thread-local.
    ExecutorService worker = Executors.newSingleThreadExecutor();
    try (LanguageModel model = LanguageModel.create(ModelConfig.defaults(), 42)) {
      double untrained = accuracy(model, questions, heldOut);
      long t0 = System.nanoTime();
      TrainStats stats = worker.submit(() -> model.pretrain(train, STEPS, BATCH, LR, 7)).get();
      double seconds = (System.nanoTime() - t0) / 1e9;
      double trained = worker.submit(() -> accuracy(model, questions, heldOut)).get();
      System.out.printf(
          "pretrain %d steps x %d: %.1f s (%.1f ms/step, so %.1f s per 500 steps), mean loss %.3f;"
              + " held-out accuracy %.3f (untrained %.3f)%n",
          STEPS, BATCH, seconds, seconds * 1000 / STEPS, seconds * 500 / STEPS, stats.meanLoss(),
          trained, untrained);
      assertEquals(STEPS, stats.steps());
      // Same seed, different JVMs: 0.955 in most runs, 0.845, 0.830 and (two intra-op threads)
      // 0.825 in others; float rounding differs between processes and the training amplifies it.
      assertTrue(trained >= 0.75, "held-out accuracy " + trained);
      assertTrue(untrained < 0.05, "untrained accuracy " + untrained);

      benchmark(model);
    } finally {
      worker.shutdown();
    }
  }

  private static double accuracy(LanguageModel model, List<GenerationRequest> qs, List<int[]> pairs) {
    List<Completion> out = model.generate(qs, SamplingParams.GREEDY);
    int right = 0;
    for (int i = 0; i < qs.size(); i++) {
      int[] p = pairs.get(i);
      right += out.get(i).text().equals((p[0] + p[1]) + "\n") ? 1 : 0;
    }
    return (double) right / qs.size();
  }

  private static void benchmark(LanguageModel model) {
    Random rnd = new Random(1);
    List<GenerationRequest> prompts = new ArrayList<>();
    List<SftExample> examples = new ArrayList<>();
    for (int i = 0; i < 256; i++) {
      StringBuilder sb = new StringBuilder();
      while (sb.length() < 95) {
        sb.append(rnd.nextInt(100)).append('+').append(rnd.nextInt(100)).append(' ');
      }
      prompts.add(new GenerationRequest(sb.append("=").toString(), i, 5));
      if (i < 64) {
        examples.add(new SftExample(sb.toString(), "ok(" + i + ")\n"));
      }
    }
    model.generate(prompts.subList(0, 16), SamplingParams.ROLLOUT); // warm-up
    long t0 = System.nanoTime();
    List<Completion> out = model.generate(prompts, SamplingParams.ROLLOUT);
    double s = (System.nanoTime() - t0) / 1e9;
    int tokens = out.stream().mapToInt(Completion::completionTokens).sum();
    System.out.printf("sampling: 256 prompts of ~100 chars, <=5 new tokens (%d in all): %.3f s = %.0f"
        + " sequences/s%n", tokens, s, 256 / s);

    model.sft(examples, 64, 1e-4f, 0); // warm-up
    t0 = System.nanoTime();
    int reps = 5;
    for (int r = 0; r < reps; r++) {
      model.sft(examples, 64, 1e-4f, r);
    }
    System.out.printf("sft: %.1f ms per 64-example minibatch (~106 tokens each)%n",
        (System.nanoTime() - t0) / 1e6 / reps);
  }
}
