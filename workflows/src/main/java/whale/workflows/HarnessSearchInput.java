package whale.workflows;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.util.List;
import whale.workflows.activities.ArchiveEntry;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.schedule.Limits;

/**
 * A harness phase's input ({@link #start}), and its whole state when it continues as new (the
 * search so far, the rollouts, the events, the controls and {@code progressSeq} where the previous
 * run stopped). Reads the flat shape of inputs recorded before these groups too (see
 * {@link WhaleState}).
 *
 * @param checkpointRef the weights every candidate is scored under
 * @param incoming the harness the search starts from (re-scored as iteration 1)
 * @param rollouts training rollouts of the whole WHALE run
 * @param progressSeq the last progress report's number
 */
public record HarnessSearchInput(
    ExperimentSpec spec,
    Plan plan,
    Limits limits,
    String checkpointRef,
    CandidateInfo incoming,
    long rollouts,
    Search search,
    List<RunEvent> events,
    Controls controls,
    int progressSeq) {

  /**
   * What the parent asked of the phase.
   *
   * @param iterations iterations to run, or with {@code adaptive} the most to run
   * @param adaptive stop by the limits' harness patience rule
   * @param promptOnly the Fast-Slow control: candidates may change only prompt text
   */
  public record Plan(int round, int iterations, boolean adaptive, boolean promptOnly) {}

  /**
   * The search so far.
   *
   * @param archive every candidate scored or rejected so far, the incoming harness first
   * @param iteration the last iteration done (0 at the start)
   * @param bestIteration the iteration whose candidate last strictly improved {@code best}
   */
  public record Search(List<ArchiveEntry> archive, int iteration, double best, int bestIteration) {
    public static final Search START = new Search(List.of(), 0, Double.NEGATIVE_INFINITY, 0);
  }

  /**
   * A phase's first run: nothing searched yet, neither paused nor stopping (the parent starts no
   * phase then), switched when a switch was signalled between phases.
   */
  static HarnessSearchInput start(ExperimentSpec spec, Plan plan, Limits limits,
      String checkpointRef, CandidateInfo incoming, long rollouts, boolean switchRequested) {
    return new HarnessSearchInput(spec, plan, limits, checkpointRef, incoming, rollouts,
        Search.START, List.of(), Controls.NONE.withSwitch(switchRequested), 0);
  }

  /** The shape above, or the flat one of inputs recorded before it (then {@code plan} is absent). */
  @JsonCreator
  static HarnessSearchInput read(@JsonProperty("spec") ExperimentSpec spec,
      @JsonProperty("plan") Plan plan, @JsonProperty("limits") Limits limits,
      @JsonProperty("checkpointRef") String checkpointRef,
      @JsonProperty("incoming") CandidateInfo incoming, @JsonProperty("rollouts") long rollouts,
      @JsonProperty("search") Search search, @JsonProperty("events") List<RunEvent> events,
      @JsonProperty("controls") Controls controls, @JsonProperty("progressSeq") int progressSeq,
      @JsonUnwrapped Flat flat) {
    if (plan == null) {
      plan = new Plan(flat.round(), flat.iterations(), flat.adaptive(), flat.promptOnly());
      search = new Search(flat.archive(), flat.iteration(), flat.best(), flat.bestIteration());
      controls = new Controls(flat.paused(), flat.switchRequested(), flat.stopRequested());
    }
    return new HarnessSearchInput(spec, plan, limits, checkpointRef, incoming, rollouts, search,
        events, controls, progressSeq);
  }

  /** The flat input's fields that the groups now hold (read only). */
  @JsonIgnoreProperties(ignoreUnknown = true)
  record Flat(int round, int iterations, boolean adaptive, boolean promptOnly,
      List<ArchiveEntry> archive, int iteration, double best, int bestIteration, boolean paused,
      boolean switchRequested, boolean stopRequested) {}
}
