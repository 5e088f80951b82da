package whale.model.hf;

import whale.model.SamplingParams;

/**
 * How the next token is drawn, in transformers' order: logits / temperature, then top-k, then
 * top-p (the smallest set of most likely tokens whose probability reaches topP).
 *
 * @param temperature 0 is greedy (argmax)
 * @param topK 0 means no top-k filtering
 * @param topP 1 means no nucleus filtering
 */
public record Sampling(double temperature, int topK, double topP) {
  public static final Sampling GREEDY = new Sampling(0, 0, 1);

  public Sampling {
    if (!(temperature >= 0) || Double.isInfinite(temperature)) {
      throw new IllegalArgumentException("temperature must be a finite number >= 0: " + temperature);
    }
    if (topK < 0) {
      throw new IllegalArgumentException("topK must be >= 0 (0: off): " + topK);
    }
    if (!(topP > 0 && topP <= 1)) {
      throw new IllegalArgumentException("topP must be in (0, 1] (1: off): " + topP);
    }
  }

  /** whale's sampling settings (temperature, top-k) with nucleus filtering off. */
  public static Sampling of(SamplingParams params) {
    return new Sampling(params.temperature(), params.topK(), 1.0);
  }
}
