package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import io.temporal.api.common.v1.Payload;
import io.temporal.api.common.v1.Payloads;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.GlobalDataConverter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The inputs recorded before the state records (flat: steps, checkpointRef, paused, ... side by
 * side) read as the same values in the grouped shape. A replay compares no payloads and no activity
 * inputs, so it would not notice a field read wrong; this does. Every workflow input in the recorded
 * histories (phase inputs, the inputs a parent sent its phases, a continued run's state) is read
 * and written again: a flat one flattens back to exactly what was recorded, a grouped one is
 * written unchanged.
 */
class StateShapesTest {
  private static final DataConverter CONVERTER = GlobalDataConverter.get();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Each input's group members that were top-level fields in the flat shape. */
  private static final Map<Class<?>, List<String>> GROUPS = Map.of(
      WhaleState.class, List.of("spent", "model", "record", "controls"),
      WeightPhaseInput.class, List.of("plan", "model", "spent", "record", "controls"),
      HarnessSearchInput.class, List.of("plan", "search", "controls"));

  @Test
  void everyRecordedInputReadsAsTheSameValues() throws Exception {
    Map<String, Integer> seen = new TreeMap<>();
    List<Path> histories;
    try (var files = WhaleWorkflowReplayTest.histories()) {
      histories = files.toList();
    }
    for (Path file : histories) {
      String id = file.getFileName().toString().replaceFirst("\\.json$", "").replace('_', '/');
      for (HistoryEvent e : WorkflowExecutionHistory.fromJson(Files.readString(file), id).getEvents()) {
        switch (e.getEventType()) {
          case EVENT_TYPE_WORKFLOW_EXECUTION_STARTED -> check(file, seen,
              e.getWorkflowExecutionStartedEventAttributes().getWorkflowType().getName(),
              e.getWorkflowExecutionStartedEventAttributes().getInput());
          case EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED -> check(file, seen,
              e.getStartChildWorkflowExecutionInitiatedEventAttributes().getWorkflowType().getName(),
              e.getStartChildWorkflowExecutionInitiatedEventAttributes().getInput());
          case EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW -> check(file, seen,
              e.getWorkflowExecutionContinuedAsNewEventAttributes().getWorkflowType().getName(),
              e.getWorkflowExecutionContinuedAsNewEventAttributes().getInput());
          default -> { }
        }
      }
    }
    // both shapes of each input occur in the recorded histories
    for (Class<?> type : GROUPS.keySet()) {
      for (String shape : List.of("flat", "grouped")) {
        assertTrue(seen.getOrDefault(type.getSimpleName() + " " + shape, 0) > 0,
            "no " + shape + " " + type.getSimpleName() + " recorded; seen " + seen);
      }
    }
  }

  /** The recorded inputs hold the flags only as all false: each one alone, read from the flat shape. */
  @Test
  void aFlatInputsFlagsEachReachTheirOwnControl() throws Exception {
    for (String on : List.of("paused", "switchRequested", "stopRequested")) {
      String flat = String.format("{\"round\": 1, \"paused\": %s, \"switchRequested\": %s, "
          + "\"stopRequested\": %s}", on.equals("paused"), on.equals("switchRequested"),
          on.equals("stopRequested"));
      Controls expected = new Controls(on.equals("paused"), on.equals("switchRequested"),
          on.equals("stopRequested"));
      assertEquals(expected, read(flat, WeightPhaseInput.class).controls(), on);
      assertEquals(expected, read(flat, HarnessSearchInput.class).controls(), on);
      // the flat state had no switch to carry
      assertEquals(expected.withSwitch(false), read(flat, WhaleState.class).controls(), on);
    }
  }

  private static <T> T read(String json, Class<T> type) {
    return CONVERTER.fromPayload(Payload.newBuilder()
        .putMetadata("encoding", ByteString.copyFromUtf8("json/plain"))
        .setData(ByteString.copyFromUtf8(json)).build(), type, type);
  }

  private static void check(Path file, Map<String, Integer> seen, String workflowType,
      Payloads input) throws Exception {
    switch (workflowType) {
      case "WeightPhaseWorkflow" -> check(file, seen, input.getPayloads(0), WeightPhaseInput.class);
      case "HarnessSearchWorkflow" ->
          check(file, seen, input.getPayloads(0), HarnessSearchInput.class);
      case "WhaleWorkflow" -> {
        // a run started by a user or a comparison has no state (null, or no payload at all)
        if (input.getPayloadsCount() > 1 && JSON.readTree(text(input.getPayloads(1))).isObject()) {
          check(file, seen, input.getPayloads(1), WhaleState.class);
        }
      }
      default -> { }
    }
  }

  private static <T> void check(Path file, Map<String, Integer> seen, Payload payload,
      Class<T> type) throws Exception {
    ObjectNode recorded = (ObjectNode) JSON.readTree(text(payload));
    T value = CONVERTER.fromPayload(payload, type, type);
    ObjectNode written = (ObjectNode) JSON.readTree(text(CONVERTER.toPayload(value).orElseThrow()));
    String where = file.getFileName() + ": " + type.getSimpleName();
    boolean flat = !recorded.has(GROUPS.get(type).get(0));
    // The fields read as before (the spec, the limits, the retention, ...) are not compared: only
    // what the groups hold, member by member, against the flat field or the recorded group's member.
    for (String group : GROUPS.get(type)) {
      written.get(group).fields().forEachRemaining(member -> {
        String name = member.getKey();
        if (flat && type == WhaleState.class && name.equals("switchRequested")) {
          // the flat state had no switch: it was never carried across continue-as-new
          assertFalse(member.getValue().booleanValue(), where);
          return;
        }
        JsonNode was = flat ? recorded.get(name) : recorded.get(group).get(name);
        assertEquals(withoutNulls(was), withoutNulls(member.getValue()),
            where + " " + group + "." + name);
      });
    }
    if (flat && type == WhaleState.class) {
      // the flat state's base mean@k is its first evaluation's, which the grouped one reads
      assertEquals(recorded.get("evaluations").get(0).get("meanAt8"), recorded.get("baseMeanAt8"),
          where);
    }
    seen.merge(type.getSimpleName() + (flat ? " flat" : " grouped"), 1, Integer::sum);
  }

  /**
   * The JSON without null members (a field added since, such as an event's {@code atMillis}, is
   * null where an old payload lacks it); null stays null.
   */
  private static JsonNode withoutNulls(JsonNode n) {
    if (n == null || n.isNull()) {
      return null;
    }
    JsonNode copy = n.deepCopy();
    strip(copy);
    return copy;
  }

  private static void strip(JsonNode n) {
    if (n.isObject()) {
      ((ObjectNode) n).properties().removeIf(e -> e.getValue().isNull());
    }
    n.forEach(StateShapesTest::strip);
  }

  private static String text(Payload p) {
    return p.getData().toStringUtf8();
  }
}
