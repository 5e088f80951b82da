package whale.workflows.schedule;

import java.util.ArrayList;
import java.util.List;

/**
 * The adaptive weight-phase rule of the method doc: the training signal (mean verifier reward per
 * RSFT step) is smoothed by a window mean over the last {@code window} steps; "best" moves only on a
 * strict improvement of that mean; the phase stops once it has run more than {@code burnIn} steps and
 * the current step is at least {@code patience} steps past the best one. Paper: W = burn-in =
 * patience = 0.2 epoch. Pure and small: its whole state is a {@link State} record, so it can live in
 * workflow state and survive continue-as-new.
 */
public final class PatienceRule {
  /** Where the rule stands within one weight phase. */
  public record State(int steps, List<Double> recent, double best, int bestStep) {
    public static final State START = new State(0, List.of(), Double.NEGATIVE_INFINITY, 0);
  }

  private final int window;
  private final int burnIn;
  private final int patience;

  public PatienceRule(int window, int burnIn, int patience) {
    if (window < 1 || burnIn < 0 || patience < 1) {
      throw new IllegalArgumentException("window and patience must be >= 1, burn-in >= 0");
    }
    this.window = window;
    this.burnIn = burnIn;
    this.patience = patience;
  }

  /** Sizes given as fractions of an epoch (method default 0.2 each), at least one step each. */
  public static PatienceRule ofEpochFractions(int stepsPerEpoch, double window, double burnIn,
      double patience) {
    return new PatienceRule(steps(stepsPerEpoch, window), steps(stepsPerEpoch, burnIn),
        steps(stepsPerEpoch, patience));
  }

  private static int steps(int stepsPerEpoch, double fraction) {
    return Math.max(1, (int) Math.round(fraction * stepsPerEpoch));
  }

  public int window() {
    return window;
  }

  public int burnIn() {
    return burnIn;
  }

  public int patience() {
    return patience;
  }

  /** The state after one more step with training signal {@code signal}. */
  public State observe(State s, double signal) {
    List<Double> recent = new ArrayList<>(s.recent());
    recent.add(signal);
    if (recent.size() > window) {
      recent.remove(0);
    }
    double mean = recent.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    int step = s.steps() + 1;
    return mean > s.best()
        ? new State(step, List.copyOf(recent), mean, step)
        : new State(step, List.copyOf(recent), s.best(), s.bestStep());
  }

  /** Whether the weight phase ends now. */
  public boolean fires(State s) {
    return s.steps() > burnIn && s.steps() - s.bestStep() >= patience;
  }
}
