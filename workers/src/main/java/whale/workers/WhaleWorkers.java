package whale.workers;

import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerOptions;
import java.util.Set;
import whale.activities.ActivityHeartbeat;
import whale.activities.ActivityRuntime;
import whale.activities.Cores;
import whale.activities.EvalActivitiesImpl;
import whale.activities.HarnessActivitiesImpl;
import whale.activities.ReportActivitiesImpl;
import whale.activities.WeightActivitiesImpl;
import whale.workflows.ComparisonWorkflowImpl;
import whale.workflows.HarnessSearchWorkflowImpl;
import whale.workflows.WeightPhaseWorkflowImpl;
import whale.workflows.WhaleWorkflowImpl;

/** Registers whale's workflows and activities on the queues a process serves. */
public final class WhaleWorkers {
  private WhaleWorkers() {}

  /**
   * How many CPU-bound activities (model training on gpu, rollouts on eval) one process runs at
   * once: {@code -Dwhale.cpuSlots=N} or {@code WHALE_CPU_SLOTS}, else the cores this JVM may use.
   * More only time-slices the same cores: every attempt slows, none finishes sooner.
   */
  public static int cpuSlots() {
    String v = System.getProperty("whale.cpuSlots", System.getenv("WHALE_CPU_SLOTS"));
    if (v == null || v.isBlank()) {
      return Runtime.getRuntime().availableProcessors();
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // fall through to the error
    }
    throw new IllegalArgumentException("whale.cpuSlots / WHALE_CPU_SLOTS must be a whole number >= 1, "
        + "got '" + v + "'");
  }

  /**
   * Activity slots per queue. With a GPU: gpu 1 (one model job at a time), eval the rest of
   * {@link #cpuSlots} (at least 1). Without one, training and pretraining are one core's work like
   * evaluation: gpu and eval get {@link #cpuSlots} slots each and {@link Cores} lets that many of
   * them compute at once, whichever queue they come from (a one-slot gpu queue and a one-slot eval
   * queue had left a core idle whenever one queue had no work: a 6 x 5 math comparison used 1.1 of
   * 2 cores). Harness 2 (mostly waiting on compilers and proposers). Tasks beyond a queue's slots
   * stay on the server, where another worker may take them.
   */
  static int slots(Queue q, Set<Queue> queues, int gpus) {
    return switch (q) {
      case GPU -> gpus > 0 ? 1 : cpuSlots();
      case EVAL -> gpus > 0 || !queues.contains(Queue.GPU) ? Math.max(1,
          cpuSlots() - (queues.contains(Queue.GPU) ? 1 : 0)) : cpuSlots();
      case HARNESS -> 2;
      default -> throw new IllegalStateException(q.name());
    };
  }

  /** {@link #slots(Queue, Set, int)} with the GPUs the PyTorch engine sees (when gpu is served). */
  static int slots(Queue q, Set<Queue> queues) {
    return slots(q, queues, queues.contains(Queue.GPU) ? whale.model.hf.CudaCheck.gpuCount() : 0);
  }

  public static void register(WorkerFactory factory, Set<Queue> queues, ActivityRuntime runtime) {
    Cores.set(cpuSlots());
    for (Queue q : queues) {
      switch (q) {
        case CONTROL -> factory.newWorker(q.taskQueue)
            .registerWorkflowImplementationTypes(WhaleWorkflowImpl.class,
            WeightPhaseWorkflowImpl.class, HarnessSearchWorkflowImpl.class,
            ComparisonWorkflowImpl.class);
        // One job on a GPU; on a CPU a slot per core, shared with eval through Cores.
        case GPU -> worker(factory, q, slots(q, queues)).registerActivitiesImplementations(
            new WeightActivitiesImpl(runtime));
        case EVAL -> worker(factory, q, slots(q, queues)).registerActivitiesImplementations(
            new EvalActivitiesImpl(runtime));
        // Reports are CPU-only like harness work, so they share its worker and slots.
        case HARNESS -> worker(factory, q, slots(q, queues)).registerActivitiesImplementations(
            new HarnessActivitiesImpl(runtime), new ReportActivitiesImpl(runtime));
        default -> throw new IllegalStateException(q.name());
      }
    }
  }

  private static Worker worker(WorkerFactory factory, Queue q, int slots) {
    return factory.newWorker(q.taskQueue, WorkerOptions.newBuilder()
        .setMaxConcurrentActivityExecutionSize(slots)
        // send each tick's heartbeat, not every 0.8 x the timeout (16 of 20 s, no slack under load)
        .setMaxHeartbeatThrottleInterval(ActivityHeartbeat.TICK)
        .build());
  }
}
