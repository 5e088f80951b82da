package whale.workflows;

import com.fasterxml.jackson.databind.JsonNode;
import io.temporal.workflow.Workflow;
import whale.workflows.schedule.Limits;

/**
 * The controls both phase workflows take from their parent (or a user): pause, resume, switch, stop
 * and new limits. One copy of the state and its signal handlers; the phase's loop reads the fields.
 */
abstract class PhaseControls {
  protected Limits limits;
  protected boolean paused;
  protected boolean switchRequested;
  protected boolean stopRequested;

  /**
   * Takes the limits and the controls a phase (or its previous run) was started with; a signal
   * handled before the run began keeps its effect.
   */
  protected void start(Limits initial, Controls was) {
    limits = initial;
    paused |= was.paused();
    switchRequested |= was.switchRequested();
    stopRequested |= was.stopRequested();
  }

  /** The controls as they stand, to carry into the next run. */
  protected Controls controls() {
    return new Controls(paused, switchRequested, stopRequested);
  }

  public void pause() {
    paused = true;
  }

  public void resume() {
    paused = false;
  }

  public void forcePhaseSwitch() {
    switchRequested = true;
  }

  public void stop() {
    stopRequested = true;
  }

  public void limits(JsonNode payload) {
    try {
      Limits l = Payloads.read(payload, Limits.class);
      Payloads.check(l.problems());
      limits = l;
    } catch (Payloads.InvalidPayloadException e) {
      Workflow.getLogger(PhaseControls.class).warn("signal limits ignored: {}", e.getMessage());
    }
  }
}
