package whale.workers.e2e;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import whale.workflows.RunEvent;
import whale.workflows.WhaleResult;

/**
 * Reading a run's histories: a run is a tree of workflows (the parent and one child per phase),
 * each possibly continued as new, so every check reads every history of the tree. Public for the
 * benchmarks (bench/*.java), which run in another class loader.
 */
public final class RunTree {
  private RunTree() {}

  /** One run of one workflow of a run's tree: the parent or a phase child. */
  public record History(String workflowId, WorkflowExecutionHistory history) {
    public List<HistoryEvent> events() {
      return history.getEvents();
    }
  }

  /**
   * Every history of the run whose parent is {@code root}: the parent's, then each child's (found
   * through START_CHILD_WORKFLOW_EXECUTION_INITIATED, recursively), each workflow with all its runs.
   * {@code live}: the run is still going, so a child just initiated may not exist yet (skipped).
   */
  public static List<History> tree(WorkflowClient client, String root, boolean live) {
    return tree(of(client), root, live);
  }

  /**
   * Where histories come from: {@code fetch(workflowId, null)} is a workflow's latest run. A client
   * in this JVM, or the temporal CLI on another host ({@code temporal workflow show -o json}).
   */
  public interface Fetcher {
    WorkflowExecutionHistory fetch(String workflowId, String runId);
  }

  static Fetcher of(WorkflowClient client) {
    return (workflowId, runId) -> runId == null ? client.fetchHistory(workflowId)
        : client.fetchHistory(workflowId, runId);
  }

  /** {@link #tree(WorkflowClient, String, boolean)}, fetching through {@code client}. */
  public static List<History> tree(Fetcher client, String root, boolean live) {
    List<History> out = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>();
    Deque<String> todo = new ArrayDeque<>(List.of(root));
    while (!todo.isEmpty()) {
      String workflowId = todo.poll();
      if (!seen.add(workflowId)) {
        continue;
      }
      List<History> runs;
      try {
        runs = runsOf(client, workflowId);
      } catch (RuntimeException e) {
        if (live) {
          continue; // a child initiated but not yet started; the next poll sees it
        }
        throw e;
      }
      for (History h : runs) {
        out.add(h);
        for (HistoryEvent e : h.events()) {
          if (e.getEventType() == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED) {
            todo.add(e.getStartChildWorkflowExecutionInitiatedEventAttributes().getWorkflowId());
          }
        }
      }
    }
    return out;
  }

  /**
   * All runs of a workflow, oldest first. Fetching by workflow id gives the latest run; a run that
   * was continued from another names it in its first event.
   */
  public static List<History> runsOf(WorkflowClient client, String workflowId) {
    return runsOf(of(client), workflowId);
  }

  static List<History> runsOf(Fetcher client, String workflowId) {
    Deque<History> runs = new ArrayDeque<>();
    WorkflowExecutionHistory h = client.fetch(workflowId, null);
    while (true) {
      runs.addFirst(new History(workflowId, h));
      String previous = h.getEvents().get(0).getWorkflowExecutionStartedEventAttributes()
          .getContinuedExecutionRunId();
      if (previous.isEmpty()) {
        return new ArrayList<>(runs);
      }
      h = client.fetch(workflowId, previous);
    }
  }

  public static boolean notFound(io.grpc.StatusRuntimeException e) {
    return e.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND;
  }

  public static DescribeWorkflowExecutionResponse describe(WorkflowServiceStubs service,
      String workflowId) {
    return service.blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default")
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId)).build());
  }

  /** Events of {@code type} across the histories, e.g. workflow tasks that timed out. */
  public static long count(List<History> histories, EventType type) {
    return histories.stream().flatMap(h -> h.events().stream())
        .filter(e -> e.getEventType() == type).count();
  }

  public static Map<String, Integer> completedPerType(List<History> histories) {
    Map<String, Integer> out = new TreeMap<>();
    forEachActivityEvent(histories, (type, e) -> {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
        out.merge(type, 1, Integer::sum);
      }
    });
    return out;
  }

  /**
   * Every activity event after its scheduling (started, completed, failed, ...), with the activity
   * type its scheduled event named.
   */
  private static void forEachActivityEvent(List<History> histories,
      java.util.function.BiConsumer<String, HistoryEvent> each) {
    for (History h : histories) {
      Map<Long, String> types = new HashMap<>();
      for (HistoryEvent e : h.events()) {
        switch (e.getEventType()) {
          case EVENT_TYPE_ACTIVITY_TASK_SCHEDULED -> types.put(e.getEventId(),
              e.getActivityTaskScheduledEventAttributes().getActivityType().getName());
          case EVENT_TYPE_ACTIVITY_TASK_STARTED -> each.accept(
              types.get(e.getActivityTaskStartedEventAttributes().getScheduledEventId()), e);
          case EVENT_TYPE_ACTIVITY_TASK_COMPLETED -> each.accept(
              types.get(e.getActivityTaskCompletedEventAttributes().getScheduledEventId()), e);
          default -> { }
        }
      }
    }
  }

  /** Activity types whose completing attempt was not the first: the ones a crash interrupted. */
  public static List<String> retried(List<History> histories) {
    List<String> out = new ArrayList<>();
    forEachActivityEvent(histories, (type, e) -> {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
          && e.getActivityTaskStartedEventAttributes().getAttempt() > 1) {
        out.add(type);
      }
    });
    return out;
  }

  /**
   * Every scheduled activity in every history of the run: type and input (the workflow id, which
   * names phase keys and child ids, replaced by a placeholder); the same multiset as the reference
   * run's means no step was repeated.
   */
  public static Map<String, Integer> scheduled(List<History> histories, String workflowId) {
    Map<String, Integer> out = new TreeMap<>();
    for (History h : histories) {
      for (HistoryEvent e : h.events()) {
        if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
          var a = e.getActivityTaskScheduledEventAttributes();
          StringBuilder in = new StringBuilder(a.getActivityType().getName());
          a.getInput().getPayloadsList().forEach(p -> in.append(' ').append(
              p.getData().toStringUtf8().replace(workflowId, "<workflow-id>")));
          out.merge(in.toString(), 1, Integer::sum);
        }
      }
    }
    return out;
  }

  /** Every child workflow started, by type and (normalised) id: the run's structure. */
  public static Map<String, Integer> children(List<History> histories, String workflowId) {
    Map<String, Integer> out = new TreeMap<>();
    for (History h : histories) {
      for (HistoryEvent e : h.events()) {
        if (e.getEventType() == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED) {
          var a = e.getStartChildWorkflowExecutionInitiatedEventAttributes();
          out.merge(a.getWorkflowType().getName() + " "
              + a.getWorkflowId().replace(workflowId, "<workflow-id>"), 1, Integer::sum);
        }
      }
    }
    return out;
  }

  /** How each workflow of the tree ended (its latest run's last event). */
  public static Map<String, EventType> ends(List<History> histories, String workflowId) {
    Map<String, EventType> out = new TreeMap<>();
    for (History h : histories) {
      List<HistoryEvent> events = h.events();
      out.put(h.workflowId().replace(workflowId, "<workflow-id>"),
          events.get(events.size() - 1).getEventType());
    }
    return out;
  }

  /** The result without its evaluations' workflow times: a crash delays them by nature. */
  public static WhaleResult timeless(WhaleResult r) {
    List<RunEvent> evals = r.evaluations().stream().map(e -> new RunEvent(e.kind(), e.phase(),
        e.round(), e.step(), e.iteration(), e.rollouts(), e.trainReward(), e.accepted(), e.loss(),
        e.meanAt8(), e.passAt8(), e.majAt8(), e.success(), e.meanTurns(), e.checkpointRef(),
        e.harnessRef(), e.note(), null)).toList();
    return new WhaleResult(r.name(), r.schedule(), r.baseMeanAt8(), r.bestMeanAt8(), r.bestAt(),
        r.rolloutsAtBest(), r.rollouts(), r.testRollouts(), r.rounds(), r.steps(), r.stopped(),
        r.checkpointRef(), r.harnessRef(), r.harnessName(), evals, r.deferredReleases());
  }
}
