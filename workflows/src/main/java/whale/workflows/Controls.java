package whale.workflows;

/**
 * The user's controls as a run or phase holds them: held by {@code pause} until {@code resume}, a
 * pending phase switch, a pending stop.
 */
public record Controls(boolean paused, boolean switchRequested, boolean stopRequested) {
  public static final Controls NONE = new Controls(false, false, false);

  Controls withPaused(boolean p) {
    return new Controls(p, switchRequested, stopRequested);
  }

  Controls withSwitch(boolean s) {
    return new Controls(paused, s, stopRequested);
  }

  Controls withStop() {
    return new Controls(paused, switchRequested, true);
  }
}
