package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.util.List;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.Limits;
import whale.workflows.schedule.PatienceRule;
import whale.workflows.schedule.PersistentSampler;
import whale.workflows.schedule.Retention;

/**
 * A weight phase's input ({@link #start}), and its whole state when it continues as new (then the
 * model, the counters, the patience state, the record, the controls and {@code progressSeq} are
 * where the previous run stopped). Reads the flat shape of inputs recorded before these groups too
 * (see {@link WhaleState}).
 *
 * @param spent counted over the whole WHALE run, not the phase
 * @param record this phase's events and evaluations so far
 * @param progressSeq the last progress report's number
 * @param retention the run's checkpoint retention; null for a run started before retention (its
 *     phases keep every checkpoint, as they did)
 */
public record WeightPhaseInput(
    ExperimentSpec spec,
    Plan plan,
    Limits limits,
    Model model,
    Counters spent,
    PatienceRule.State patience,
    RunRecord record,
    Controls controls,
    int progressSeq,
    Retention retention) {

  /**
   * What the parent asked of the phase.
   *
   * @param stepLimit the phase ends at this global step count at the latest
   * @param adaptive the patience rule may end the phase earlier
   */
  public record Plan(int round, int stepLimit, boolean adaptive) {}

  /**
   * A phase's first run: nothing of it done, neither paused nor stopping (the parent starts no phase
   * then), switched when a switch was signalled between phases.
   */
  static WeightPhaseInput start(ExperimentSpec spec, Plan plan, Limits limits, Model model,
      Counters spent, boolean switchRequested, Retention retention) {
    return new WeightPhaseInput(spec, plan, limits, model, spent, PatienceRule.State.START,
        RunRecord.EMPTY, Controls.NONE.withSwitch(switchRequested), 0, retention);
  }

  /** The shape above, or the flat one of inputs recorded before it (then {@code plan} is absent). */
  @JsonCreator
  static WeightPhaseInput read(@JsonProperty("spec") ExperimentSpec spec,
      @JsonProperty("plan") Plan plan, @JsonProperty("limits") Limits limits,
      @JsonProperty("model") Model model, @JsonProperty("spent") Counters spent,
      @JsonProperty("patience") PatienceRule.State patience,
      @JsonProperty("record") RunRecord record, @JsonProperty("controls") Controls controls,
      @JsonProperty("progressSeq") int progressSeq,
      @JsonProperty("retention") Retention retention, @JsonUnwrapped Flat flat) {
    if (plan == null) {
      plan = new Plan(flat.round(), flat.stepLimit(), flat.adaptive());
      model = new Model(flat.checkpointRef(), flat.harness(), flat.sampler());
      spent = new Counters(flat.steps(), flat.rollouts(), flat.testRollouts());
      record = new RunRecord(flat.events(), flat.evaluations());
      controls = new Controls(flat.paused(), flat.switchRequested(), flat.stopRequested());
    }
    return new WeightPhaseInput(spec, plan, limits, model, spent, patience, record, controls,
        progressSeq, retention);
  }

  /** The flat input's fields that the groups now hold (read only). */
  @JsonIgnoreProperties(ignoreUnknown = true)
  record Flat(int round, int stepLimit, boolean adaptive, CandidateInfo harness,
      String checkpointRef, int steps, PersistentSampler.Position sampler, long rollouts,
      long testRollouts, List<RunEvent> events, List<RunEvent> evaluations, boolean paused,
      boolean switchRequested, boolean stopRequested) {}
}
