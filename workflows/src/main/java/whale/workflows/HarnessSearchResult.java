package whale.workflows;

import java.util.List;
import whale.workflows.activities.CandidateInfo;

/**
 * What a harness phase hands back: the accepted harness (only the winner's code carries over), the
 * iteration that produced it, its D_harness success and mean turns, the rollouts spent in the whole
 * run, every candidate event, and why it ended ("length", "patience", "switch", "stop").
 */
public record HarnessSearchResult(
    CandidateInfo winner,
    int winnerIteration,
    double success,
    double meanTurns,
    int iterations,
    long rollouts,
    List<RunEvent> events,
    String endedBy) {}
