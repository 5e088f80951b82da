package whale.model;

/**
 * How completions are drawn. The method doc's rollout setting is temperature 1.0, top_k 20.
 *
 * @param temperature 0 means greedy decoding
 * @param topK 0 means no top-k filtering
 */
public record SamplingParams(double temperature, int topK) {
  public static final SamplingParams ROLLOUT = new SamplingParams(1.0, 20);
  public static final SamplingParams GREEDY = new SamplingParams(0.0, 0);
}
