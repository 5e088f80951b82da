package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.WeightActivities;

/**
 * A small WHALE run beside CPU-bound load on every core: no attempt may be timed out (heartbeats
 * come from a ticker, not from the starved compute threads) and the process never runs more
 * CPU-bound activities at once than its slots.
 */
class BusyMachineTest {
  @TempDir static Path artifacts;
  static TestWorkflowEnvironment env;

  /** The real dev server (a separate process, starved too) when `temporal` is on the PATH, as `whale demo`. */
  @BeforeAll
  static void startWorkers() throws Exception {
    env = DemoCommand.environment(DemoCommand.findOnPath("temporal"));
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), ActivityRuntime.open(artifacts));
    env.start();
  }

  @AfterAll
  static void stop() {
    env.close();
  }

  @Test
  void aRunBesideCpuBoundLoadNeedsNoSecondAttempt() throws Exception {
    WorkflowClient client = env.getWorkflowClient();
    // two spinning threads per core: the run's threads get about a third of the machine
    int cores = Runtime.getRuntime().availableProcessors();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> load = new ArrayList<>();
    for (int i = 0; i < 2 * cores; i++) {
      Thread t = new Thread(() -> {
        long x = 0;
        while (!stop.get()) {
          x += Long.numberOfTrailingZeros(x + 1);
        }
      }, "busy-" + i);
      t.setDaemon(true);
      t.start();
      load.add(t);
    }
    long t0 = System.nanoTime();
    WhaleResult r;
    try {
      r = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
          .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId("busy-run")
          .setWorkflowExecutionTimeout(Duration.ofMinutes(15)).build())
          .run(TinyRun.spec("busy"), null);
    } finally {
      stop.set(true);
    }
    System.out.printf("busy run: %.1f s beside %d spinning threads on %d cores%n",
        (System.nanoTime() - t0) / 1e9, load.size(), cores);
    assertEquals(2, r.rounds());

    List<String> retried = new ArrayList<>();
    int started = 0;
    // CPU-bound activities (gpu, eval) running at once, from started and closed event times
    List<long[]> intervals = new ArrayList<>();
    for (String id : Histories.ids(client, "busy-run")) {
      Map<Long, String> queueOf = new HashMap<>();
      Map<Long, Long> startOf = new HashMap<>();
      for (HistoryEvent e : client.fetchHistory(id).getEvents()) {
        long at = e.getEventTime().getSeconds() * 1_000_000_000L + e.getEventTime().getNanos();
        switch (e.getEventType()) {
          case EVENT_TYPE_ACTIVITY_TASK_SCHEDULED -> queueOf.put(e.getEventId(),
              e.getActivityTaskScheduledEventAttributes().getTaskQueue().getName());
          case EVENT_TYPE_ACTIVITY_TASK_STARTED -> {
            var a = e.getActivityTaskStartedEventAttributes();
            started++;
            if (a.getAttempt() != 1) {
              retried.add(id + " event " + e.getEventId() + ": attempt " + a.getAttempt() + ", last failure "
                  + a.getLastFailure().getMessage());
            }
            startOf.put(a.getScheduledEventId(), at);
          }
          case EVENT_TYPE_ACTIVITY_TASK_COMPLETED -> closed(intervals, queueOf, startOf,
              e.getActivityTaskCompletedEventAttributes().getScheduledEventId(), at);
          case EVENT_TYPE_ACTIVITY_TASK_FAILED, EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
              EVENT_TYPE_ACTIVITY_TASK_CANCELED -> retried.add(id + " event " + e.getEventId() + ": "
              + e.getEventType());
          default -> { }
        }
      }
    }
    assertTrue(started > 10, "activities started: " + started);
    assertEquals(List.of(), retried, "every activity must finish in its first attempt");

    int most = 0;
    for (long[] a : intervals) {
      int overlapping = 0;
      for (long[] b : intervals) {
        if (b[0] <= a[0] && a[0] < b[1]) {
          overlapping++;
        }
      }
      most = Math.max(most, overlapping);
    }
    int slots = WhaleWorkers.slots(Queue.GPU, EnumSet.allOf(Queue.class))
        + WhaleWorkers.slots(Queue.EVAL, EnumSet.allOf(Queue.class));
    System.out.printf("%d activities, at most %d CPU-bound at once (slots %d)%n", started, most, slots);
    assertTrue(most <= slots, "CPU-bound activities at once: " + most + " > " + slots);
  }

  private static void closed(List<long[]> intervals, Map<Long, String> queueOf, Map<Long, Long> startOf,
      long scheduled, long at) {
    String q = queueOf.get(scheduled);
    if (WeightActivities.TASK_QUEUE.equals(q) || EvalActivities.TASK_QUEUE.equals(q)) {
      intervals.add(new long[] {startOf.get(scheduled), at});
    }
  }
}
