package whale.workflows;

import java.util.List;

/**
 * The run's record so far: every step, test evaluation, candidate and acceptance in order, and the
 * test evaluations alone (the learning curve).
 */
public record RunRecord(List<RunEvent> events, List<RunEvent> evaluations) {
  public static final RunRecord EMPTY = new RunRecord(List.of(), List.of());

  /** Immutable copies; at most the last {@code maxEvents} events, the evaluations whole. */
  static RunRecord of(List<RunEvent> events, List<RunEvent> evaluations, int maxEvents) {
    List<RunEvent> kept = events.size() <= maxEvents ? events
        : events.subList(events.size() - maxEvents, events.size());
    return new RunRecord(List.copyOf(kept), List.copyOf(evaluations));
  }
}
