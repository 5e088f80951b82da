package whale.model;

/**
 * What one training call did.
 *
 * @param meanLoss mean negative log-likelihood per trained token (nats), over the whole call
 * @param steps optimizer steps taken
 * @param tokens tokens that carried loss
 */
public record TrainStats(double meanLoss, int steps, long tokens) {
  public static final TrainStats NONE = new TrainStats(0.0, 0, 0);
}
