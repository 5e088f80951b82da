package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A request's own temperature (a chat turn's) on the real builtin model. */
class TurnTemperatureTest {
  @Test
  void aRowAtItsOwnTemperatureIsWhatItWouldBeAloneAtThatTemperature() {
    ModelConfig config = new ModelConfig(ModelConfig.defaults().vocabSize(), 64, 32, 1, 2, 4);
    try (LanguageModel model = LanguageModel.create(config, 3)) {
      SamplingParams run = new SamplingParams(1.0, 20);
      List<GenerationRequest> mixed = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        Double t = i % 3 == 0 ? null : i % 3 == 1 ? 0.0 : 2.5;
        mixed.add(new GenerationRequest("Q: " + i + "+" + i + "\nA: ", 100 + i, 12, true, t));
      }
      List<Completion> together = model.generate(mixed, run);
      List<String> distinct = new ArrayList<>();
      for (int i = 0; i < mixed.size(); i++) {
        GenerationRequest r = mixed.get(i);
        GenerationRequest plain = new GenerationRequest(r.prompt(), r.seed(), r.maxNewTokens(), true);
        SamplingParams at = r.temperature() == null ? run : new SamplingParams(r.temperature(), run.topK());
        assertEquals(model.generate(List.of(plain), at).get(0), together.get(i), "row " + i);
        distinct.add(together.get(i).text());
      }
      // the temperatures matter: a greedy row differs from the same row sampled at the run's
      int differ = 0;
      for (int i = 1; i < mixed.size(); i += 3) {
        GenerationRequest r = mixed.get(i);
        if (!model.generate(List.of(new GenerationRequest(r.prompt(), r.seed(), 12, true)), run).get(0).text()
            .equals(together.get(i).text())) {
          differ++;
        }
      }
      assertNotEquals(0, differ, "greedy rows: " + distinct);
    }
  }

  @Test
  void aTemperatureMustBeAFiniteNumberAtLeastZero() {
    for (double bad : new double[] {-0.1, Double.NaN, Double.POSITIVE_INFINITY}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> new GenerationRequest("x", 1, 2, true, bad));
      assertEquals("temperature must be a finite number >= 0: " + bad, e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> whale.chat.ChatOptions.of(4).withTemperature(bad));
    }
  }
}
