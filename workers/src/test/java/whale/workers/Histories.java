package whale.workers;

import io.temporal.api.enums.v1.EventType;
import io.temporal.client.WorkflowClient;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.WorkflowReplayer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import whale.workflows.ComparisonWorkflowImpl;
import whale.workflows.HarnessSearchWorkflowImpl;
import whale.workflows.WeightPhaseWorkflowImpl;
import whale.workflows.WhaleWorkflowImpl;

/**
 * Replays a finished run's history and those of its phase children against the current workflow
 * code, and writes them to {@code workers/target/histories/<name>/} — the files the workflows
 * module's replay test keeps (copy them into workflows/src/test/resources/histories/ only with a
 * deliberate workflow change).
 */
final class Histories {
  private Histories() {}


  /** Replays {@code id} and its children (found in its history), saving each; returns their ids. */
  static List<String> replayAndKeep(WorkflowClient client, String id, String name) throws Exception {
    Path out = Path.of("target", "histories", name);
    Files.createDirectories(out);
    List<String> ids = new ArrayList<>();
    collect(client, id, ids);
    for (String w : ids) {
      WorkflowExecutionHistory h = client.fetchHistory(w);
      WorkflowReplayer.replayWorkflowExecution(h, WhaleWorkflowImpl.class,
          WeightPhaseWorkflowImpl.class, HarnessSearchWorkflowImpl.class, ComparisonWorkflowImpl.class);
      Files.writeString(out.resolve(w.replace('/', '_') + ".json"), h.toJson(true));
    }
    return ids;
  }

  /** {@code id} and the ids of all its descendants (phase children), in the order found. */
  static List<String> ids(WorkflowClient client, String id) {
    List<String> ids = new ArrayList<>();
    collect(client, id, ids);
    return ids;
  }

  private static void collect(WorkflowClient client, String id, List<String> ids) {
    ids.add(id);
    for (var e : client.fetchHistory(id).getEvents()) {
      if (e.getEventType() == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED) {
        collect(client, e.getStartChildWorkflowExecutionInitiatedEventAttributes().getWorkflowId(), ids);
      }
    }
  }
}
