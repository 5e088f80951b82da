package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.WorkflowReplayer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays recorded histories of complete runs of every schedule — the parent WhaleWorkflow and each
 * phase child — against the current workflow code: any change that would break running workflows
 * fails here. Re-record them with the workers module's SchedulesTest/WhaleWorkflowTest (they write
 * workers/target/histories/<schedule>/) only together with a deliberate, versioned workflow change.
 * The schedules' histories predate checkpoint retention: they replay without its version marker,
 * so without its activities. {@code retention/} is a run recorded with it (workers' RetentionTest);
 * {@code comparison/} a comparison whose cells defer deleting what they release to it, and whose
 * evaluations carry their workflow times (RetentionTest#aComparisonsCellsShare...).
 * {@code limits-after-pause/} are runs recorded (with the fast tier's fake activities) before the
 * phases re-checked their limits after a pause: each phase paused at a boundary and, its budget or
 * harness maximum lowered meanwhile, made one more step or iteration; the versioned fix replays them.
 * {@code continue-as-new/} is SchedulesTest's run that continues as new after every unit of work
 * (its last run, started from the carried state, and that run's weight phase, itself continued),
 * recorded while the state and the phase inputs were flat records; {@code state-records/} holds
 * the same run and WhaleWorkflowTest's full run recorded with the grouped records (Counters, Model,
 * RunRecord, Controls, the phases' Plan). The flat inputs still read (see StateShapesTest); the
 * commands did not change, and a replay compares commands by kind, id and type, not payloads.
 */
class WhaleWorkflowReplayTest {
  static final List<String> SCHEDULES = List.of("whale", "whale-adaptive", "weight-only",
      "harness-only", "stagewise", "fst");

  static Stream<Path> histories() throws Exception {
    Path root = Path.of(WhaleWorkflowReplayTest.class.getResource("/histories").toURI());
    return Files.walk(root).filter(p -> p.toString().endsWith(".json")).sorted();
  }

  @Test
  void everyScheduleHasARecordedRunWithItsPhases() throws Exception {
    for (String s : SCHEDULES) {
      Path dir = Path.of(WhaleWorkflowReplayTest.class.getResource("/histories/" + s).toURI());
      try (Stream<Path> files = Files.list(dir)) {
        assertTrue(files.count() >= 2, s + ": the parent and at least one phase child");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("histories")
  void recordedHistoryReplays(Path history) throws Exception {
    // Phase children's ids derive from the parent's, so replay under the recorded workflow id
    // (the file name, with '/' written as '_').
    String id = history.getFileName().toString().replaceFirst("\\.json$", "").replace('_', '/');
    WorkflowExecutionHistory h = WorkflowExecutionHistory.fromJson(Files.readString(history), id);
    try {
      replay(h);
    } catch (Exception e) {
      // Temporal's deadlock detector gives a workflow task one wall-clock second; on a loaded
      // machine (load 8-9 on 2 cores) Jackson building its first deserializers in this JVM took
      // longer. That is the machine, not the history: replay once more, now warm. A real
      // nondeterminism fails both times.
      if (!causedByDeadlockDetector(e)) {
        throw e;
      }
      replay(h);
    }
  }

  private static void replay(WorkflowExecutionHistory h) throws Exception {
    WorkflowReplayer.replayWorkflowExecution(h, WhaleWorkflowImpl.class,
        WeightPhaseWorkflowImpl.class, HarnessSearchWorkflowImpl.class, ComparisonWorkflowImpl.class);
  }

  private static boolean causedByDeadlockDetector(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c.getClass().getSimpleName().equals("PotentialDeadlockException")
          || String.valueOf(c.getMessage()).contains("PotentialDeadlockException")) {
        return true;
      }
    }
    return false;
  }
}
