package whale.workers;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.stream.Collectors;
import whale.workflows.WhaleWorkflow;
import whale.workflows.activities.EvalActivities;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.WeightActivities;

/** The four task queues a worker can serve; `whale worker --queues control,gpu,harness,eval`. */
public enum Queue {
  CONTROL(WhaleWorkflow.TASK_QUEUE),
  GPU(WeightActivities.TASK_QUEUE),
  HARNESS(HarnessActivities.TASK_QUEUE),
  EVAL(EvalActivities.TASK_QUEUE);

  public final String taskQueue;

  Queue(String taskQueue) {
    this.taskQueue = taskQueue;
  }

  /** Parses "control,gpu,harness,eval"; an unknown name is an error that lists the valid ones. */
  public static EnumSet<Queue> parse(String csv) {
    EnumSet<Queue> out = EnumSet.noneOf(Queue.class);
    for (String raw : csv.split(",")) {
      String name = raw.trim().toLowerCase(Locale.ROOT);
      if (name.isEmpty()) {
        continue;
      }
      out.add(Arrays.stream(values())
          .filter(q -> q.name().toLowerCase(Locale.ROOT).equals(name) || q.taskQueue.equals(name))
          .findFirst()
          .orElseThrow(() -> new IllegalArgumentException("unknown queue '" + raw.trim()
              + "'; valid: " + Arrays.stream(values()).map(q -> q.name().toLowerCase(Locale.ROOT))
              .collect(Collectors.joining(",")))));
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("no queue given; valid: control,gpu,harness,eval");
    }
    return out;
  }
}
