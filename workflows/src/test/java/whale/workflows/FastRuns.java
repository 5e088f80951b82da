package whale.workflows;

import static org.junit.jupiter.api.Assertions.fail;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateException;
import io.temporal.testing.TestWorkflowExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * What the fast tier's tests share besides the fakes: the test server, a small spec, and waiting on
 * a run from the outside.
 *
 * <p>The spec's sizes: 32 weight problems, 8 prompts per step, so 4 steps per epoch; weight phases
 * of 0.5 epoch (2 steps), a budget of 1.5 epochs (6 steps), harness phases of 2 iterations of 2
 * candidates, test every 0.5 epoch (2 steps). A step costs 8 x 4 = 32 rollouts, a scored harness
 * 16 (one rollout per D_harness problem), a test evaluation 12 x 2 = 24.
 */
final class FastRuns {
  private FastRuns() {}

  static final int STEP_ROLLOUTS = 32;
  static final int SCORE_ROLLOUTS = 16;
  static final int TEST_ROLLOUTS = 24;

  /** The default phases section. */
  static final String PHASES =
      "\"weightEpochsPerPhase\": 0.5, \"harnessIterationsPerPhase\": 2, \"weightBudgetEpochs\": 1.5";

  /** The in-memory test server (time skipping) with whale's search attributes, not started yet. */
  static TestWorkflowExtension extension() {
    TestWorkflowExtension.Builder b = TestWorkflowExtension.newBuilder().setDoNotStart(true);
    WhaleSearchAttributes.ALL.forEach(b::registerSearchAttribute);
    return b.build();
  }

  static ExperimentSpec spec(String schedule) {
    return spec(schedule, PHASES, 0.5, "");
  }

  /**
   * A spec under {@code schedule} with the given phases section, a test evaluation every
   * {@code evalEveryEpochs} (0: at phase ends only) and {@code extra} top-level members
   * (",\"workflow\": {...}").
   */
  static ExperimentSpec spec(String schedule, String phases, double evalEveryEpochs, String extra) {
    return SpecJson.parse("""
        {
          "name": "fast",
          "schedule": "%s",
          "seed": 7,
          "data": { "weightProblems": 32, "harnessProblems": 16, "testProblems": 12 },
          "rsft": { "promptsPerStep": 8, "samplesPerPrompt": 4 },
          "phases": { %s },
          "harness": { "candidatesPerIteration": 2 },
          "eval": { "k": 2, "everyEpochs": %s }%s
        }
        """.formatted(schedule, phases, evalEveryEpochs, extra));
  }

  static WorkflowOptions options(String id) {
    return WorkflowOptions.newBuilder().setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id).build();
  }

  /** RSFT steps by round, from a run's record. */
  static Map<Integer, List<Integer>> stepsByRound(List<RunEvent> history) {
    return history.stream().filter(e -> e.kind().equals("rsft-step"))
        .collect(Collectors.groupingBy(RunEvent::round, TreeMap::new,
            Collectors.mapping(RunEvent::step, Collectors.toList())));
  }

  /** "round phase step mean" of each evaluation, e.g. "1 weight 2 0.20". */
  static List<String> curve(List<RunEvent> evaluations) {
    return evaluations.stream().map(e -> String.format(java.util.Locale.ROOT, "%d %s %d %.2f",
        e.round(), e.phase(), e.step(), e.meanAt8())).toList();
  }

  /** The events without their workflow times (which differ between otherwise identical runs). */
  static List<RunEvent> timeless(List<RunEvent> events) {
    return events.stream().map(e -> new RunEvent(e.kind(), e.phase(), e.round(), e.step(),
        e.iteration(), e.rollouts(), e.trainReward(), e.accepted(), e.loss(), e.meanAt8(),
        e.passAt8(), e.majAt8(), e.success(), e.meanTurns(), e.checkpointRef(), e.harnessRef(),
        e.note(), null)).toList();
  }

  /** Polls the run's status until {@code p} holds. */
  static WhaleStatus waitFor(WhaleWorkflow wf, Predicate<WhaleStatus> p) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      WhaleStatus s = wf.status();
      if (p.test(s)) {
        return s;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("condition not reached; status " + wf.status());
  }

  /** Waits until workflow {@code id}'s current run has received signal {@code name}. */
  static void awaitSignal(WorkflowClient client, String id, String name) throws InterruptedException {
    awaitSignals(client, id, name, 1);
  }

  /** Waits until workflow {@code id}'s current run has received signal {@code name} {@code n} times. */
  static void awaitSignals(WorkflowClient client, String id, String name, int n)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      if (client.fetchHistory(id).getEvents().stream().filter(e ->
          e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
              && e.getWorkflowExecutionSignaledEventAttributes().getSignalName().equals(name))
          .count() >= n) {
        return;
      }
      Thread.sleep(20);
    }
    throw new AssertionError(id + " never received signal " + name + " " + n + " times");
  }

  /**
   * Waits until workflow {@code id}'s current run is blocked: its last workflow task completed with
   * no activity and no outgoing signal in flight.
   */
  static void awaitIdle(WorkflowClient client, String id) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      List<HistoryEvent> h = client.fetchHistory(id).getEvents();
      if (h.get(h.size() - 1).getEventType() == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
          && count(h, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
              == count(h, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
          && count(h, EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)
              == count(h, EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED)) {
        return;
      }
      Thread.sleep(20);
    }
    throw new AssertionError(id + " never went idle");
  }

  private static long count(List<HistoryEvent> h, EventType t) {
    return h.stream().filter(e -> e.getEventType() == t).count();
  }

  /** How many runs workflow {@code id} has had: 1, plus one per continue-as-new. */
  static int runs(WorkflowClient client, String id) {
    int n = 1;
    String previous = client.fetchHistory(id).getEvents().get(0)
        .getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId();
    while (!previous.isEmpty()) {
      n++;
      previous = client.fetchHistory(id, previous).getEvents().get(0)
          .getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId();
    }
    return n;
  }

  /** Asserts that {@code update} is rejected with a message containing {@code why}. */
  static void rejected(Runnable update, String why) {
    try {
      update.run();
      fail("update accepted; expected a rejection mentioning '" + why + "'");
    } catch (WorkflowUpdateException e) {
      String msg = String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
      if (!msg.contains(why)) {
        fail("rejection '" + msg + "' should mention '" + why + "'");
      }
    }
  }
}
