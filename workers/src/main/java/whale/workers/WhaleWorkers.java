package whale.workers;

import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerOptions;
import java.util.Set;
import whale.activities.ActivityRuntime;
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

  public static void register(WorkerFactory factory, Set<Queue> queues, ActivityRuntime runtime) {
    for (Queue q : queues) {
      switch (q) {
        case CONTROL -> factory.newWorker(q.taskQueue)
            .registerWorkflowImplementationTypes(WhaleWorkflowImpl.class,
            WeightPhaseWorkflowImpl.class, HarnessSearchWorkflowImpl.class,
            ComparisonWorkflowImpl.class);
        // One model job at a time per process: the model is the unit of GPU/CPU contention.
        case GPU -> worker(factory, q, 1).registerActivitiesImplementations(
            new WeightActivitiesImpl(runtime));
        case EVAL -> worker(factory, q, 2).registerActivitiesImplementations(
            new EvalActivitiesImpl(runtime));
        // Reports are CPU-only like harness work, so they share its worker and slots.
        case HARNESS -> worker(factory, q, 2).registerActivitiesImplementations(
            new HarnessActivitiesImpl(runtime), new ReportActivitiesImpl(runtime));
        default -> throw new IllegalStateException(q.name());
      }
    }
  }

  private static Worker worker(WorkerFactory factory, Queue q, int slots) {
    return factory.newWorker(q.taskQueue, WorkerOptions.newBuilder()
        .setMaxConcurrentActivityExecutionSize(slots)
        .build());
  }
}
