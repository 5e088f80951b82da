package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.util.List;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.Limits;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.PhasePlanner;
import whale.workflows.schedule.Retention;

/**
 * Everything a WHALE run knows between phases: what it carries into a fresh run when it continues as
 * new. Only references and small numbers; the step-level record is capped (see {@link #KEPT_EVENTS}),
 * the learning curve (every test evaluation) is kept whole.
 *
 * <p>Runs recorded before these named groups carried a flat state (steps, rollouts, checkpointRef,
 * events, paused, ... side by side); {@link #read} takes either shape, so their continue-as-new
 * inputs still read. A replay compares no payloads (only command kinds, ids and types), so the
 * nested shape needs no version marker.
 *
 * @param round the last round started (0 before the first phase)
 * @param lastPhase the kind of the last phase run; null before the first
 * @param controls {@code switchRequested} is always false here: a switch signalled between phases
 *     applies to the next phase of the same run only
 */
public record WhaleState(
    Limits limits,
    int round,
    PhasePlanner.Kind lastPhase,
    Counters spent,
    Model model,
    RunRecord record,
    Controls controls,
    int continuedAsNew,
    Retention retention) {
  /** Most step/candidate events carried over; older ones stay in the phases' own histories. */
  public static final int KEPT_EVENTS = 500;

  /** The shape above, or the flat one of states written before it (then {@code spent} is absent). */
  @JsonCreator
  static WhaleState read(@JsonProperty("limits") Limits limits, @JsonProperty("round") int round,
      @JsonProperty("lastPhase") PhasePlanner.Kind lastPhase, @JsonProperty("spent") Counters spent,
      @JsonProperty("model") Model model, @JsonProperty("record") RunRecord record,
      @JsonProperty("controls") Controls controls,
      @JsonProperty("continuedAsNew") int continuedAsNew,
      @JsonProperty("retention") Retention retention, @JsonUnwrapped Flat flat) {
    if (spent == null) {
      spent = new Counters(flat.steps(), flat.rollouts(), flat.testRollouts());
      model = new Model(flat.checkpointRef(), flat.harness(), flat.sampler());
      record = new RunRecord(flat.events(), flat.evaluations());
      controls = new Controls(flat.paused(), false, flat.stopRequested());
    }
    return new WhaleState(limits, round, lastPhase, spent, model, record, controls, continuedAsNew,
        retention);
  }

  /**
   * The flat state's fields that the groups now hold (read only). Its {@code baseMeanAt8} is left
   * out: it is always the first evaluation's mean.
   */
  @JsonIgnoreProperties(ignoreUnknown = true)
  record Flat(int steps, long rollouts, long testRollouts, String checkpointRef,
      CandidateInfo harness, PersistentSampler.Position sampler, List<RunEvent> events,
      List<RunEvent> evaluations, boolean paused, boolean stopRequested) {}
}
