package whale.model.hf;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import whale.model.GcStorm;
import whale.model.SftExample;

/**
 * The child process of {@link HfGcDuringTrainingTest}: pairs of Hugging Face models loaded from the
 * same fixture take the same seeded SFT steps in lock step (LoRA, LoRA recomputing activations in
 * backward, full fine-tuning) while another thread collects garbage every millisecond, so
 * collections fall between each step's forward and backward passes. Exits 0 when every pair is
 * still bit-identical after every step; otherwise prints the mode and the first step where they differ.
 */
public final class HfTwinTraining {
  public static void main(String[] args) throws Exception {
    int steps = Integer.parseInt(args[0]);
    Path dir = HfFixtures.dir("llama");
    List<SftExample> examples = new ArrayList<>();
    for (int a = 0; a < 6; a++) {
      for (int b = 0; b < 6; b++) {
        examples.add(new SftExample(a + "+" + b + "=", (a + b) + "\n"));
      }
    }
    GcStorm.start(1);
    for (String mode : List.of("lora", "lora-checkpointed", "full")) {
      try (HfModel a = HfModel.load(dir, HfModel.LINE); HfModel b = HfModel.load(dir, HfModel.LINE)) {
        for (HfModel m : List.of(a, b)) {
          if (mode.equals("full")) {
            m.trainFull();
          } else {
            m.trainLora(new HfModel.LoraSpec(8, 16, List.copyOf(LoraAdapters.TARGETS)), 1);
            m.trainer().activationCheckpointing(mode.equals("lora-checkpointed"));
          }
        }
        for (int s = 0; s < steps; s++) {
          a.sft(examples, 12, 6, 1e-2f, s);
          b.sft(examples, 12, 6, 1e-2f, s);
          if (!Arrays.deepEquals(weights(a), weights(b))) {
            System.out.println(mode + " twins differ after step " + s);
            System.exit(1);
          }
        }
      }
    }
    System.out.println("twins identical after " + steps + " steps in every mode");
    System.exit(0);
  }

  private static float[][] weights(HfModel m) {
    return GcStorm.values(m.trainer().trainable().values());
  }
}
