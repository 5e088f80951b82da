package whale.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The child process of {@link GcDuringTrainingTest}: two models with the same seed take the same
 * pretraining steps in lock step while another thread collects garbage every few milliseconds, so
 * collections keep falling between a step's forward and backward passes. Exits 0 when the two are
 * still bit-identical after every step; otherwise prints the first step where they differ.
 */
public final class TwinTraining {
  public static void main(String[] args) throws Exception {
    int steps = Integer.parseInt(args[0]);
    List<String> corpus = new ArrayList<>();
    for (int a = 0; a < 60; a++) {
      for (int b = 0; b < 40; b++) {
        corpus.add(a + "+" + b + "=" + (a + b) + "\n");
      }
    }
    ModelConfig config = new ModelConfig(ModelConfig.defaults().vocabSize(), 32, 32, 2, 4, 4);
    GcStorm.start(3);
    try (LanguageModel a = LanguageModel.create(config, 7);
        LanguageModel b = LanguageModel.create(config, 7)) {
      for (int s = 0; s < steps; s++) {
        a.pretrain(corpus, 1, 16, 3e-3f, s);
        b.pretrain(corpus, 1, 16, 3e-3f, s);
        if (!Arrays.deepEquals(weights(a), weights(b))) {
          System.out.println("twins differ after step " + s);
          System.exit(1);
        }
      }
    }
    System.out.println("twins identical after " + steps + " steps");
    System.exit(0);
  }

  private static float[][] weights(LanguageModel m) throws Exception {
    var f = LanguageModel.class.getDeclaredField("gpt");
    f.setAccessible(true);
    return GcStorm.values(((TinyGpt) f.get(m)).weights().values());
  }
}
