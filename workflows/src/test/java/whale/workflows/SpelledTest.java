package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import io.temporal.common.converter.DefaultDataConverter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.TaskRef;

/** The closed sets: their spellings are the JSON they replaced, in both directions. */
class SpelledTest {
  static final ObjectMapper JSON = new ObjectMapper();

  /** Each closed set and its spellings, as the strings were before the enums. */
  static final Map<Class<? extends Spelled>, List<String>> SPELLINGS = Map.of(
      Schedule.class, List.of("whale", "whale-adaptive", "weight-only", "harness-only", "stagewise",
          "fst"),
      Proposer.class, List.of("template", "openai", "command"),
      Finetune.class, List.of("full", "lora"),
      Dtype.class, List.of("float32", "float16"),
      Device.class, List.of("cpu", "cuda"),
      EvalRequest.Split.class, List.of("test", "harness"));

  @Test
  void everyValueIsWrittenAndReadAsItsSpelling() throws Exception {
    for (var e : SPELLINGS.entrySet()) {
      Spelled[] values = e.getKey().getEnumConstants();
      assertEquals(e.getValue(), java.util.Arrays.stream(values).map(Spelled::json).toList());
      for (Spelled v : values) {
        String json = "\"" + v.json() + "\"";
        assertEquals(json, JSON.writeValueAsString(v));
        assertEquals(v, JSON.readValue(json, e.getKey()));
        assertEquals(v.json(), v.toString());
      }
    }
  }

  @Test
  void aBadSpellingIsRefusedNamingTheFieldAndTheAllowedValues() {
    assertEquals("schedule: must be one of [fst, harness-only, stagewise, weight-only, whale, "
        + "whale-adaptive], got 'adaptive'",
        assertThrows(IllegalArgumentException.class, () -> Schedule.of("adaptive")).getMessage());
    assertEquals("model.dtype: must be one of [float16, float32], got 'FLOAT16'",
        assertThrows(IllegalArgumentException.class, () -> Dtype.of("FLOAT16")).getMessage());
    ValueInstantiationException e = assertThrows(ValueInstantiationException.class,
        () -> JSON.readValue("\"LORA\"", Finetune.class));
    assertTrue(e.getMessage().contains("rsft.finetune: must be one of [full, lora], got 'LORA'"),
        e.getMessage());
  }

  @Test
  void aSpecKeepsItsStringsAndTypedAccessorsReadThem() {
    ExperimentSpec s = SpecJson.parse("{\"schedule\": \"whale-adaptive\", \"model\": {\"source\": "
        + "\"huggingface\", \"path\": \"/m\", \"dtype\": \"float16\", \"device\": \"cuda\"}, "
        + "\"harness\": {\"proposer\": \"command\", \"command\": [\"p\"]}}");
    assertEquals(Schedule.WHALE_ADAPTIVE, s.scheduleKind());
    assertEquals(Dtype.FLOAT16, s.model().dtypeKind());
    assertEquals(Device.CUDA, s.model().deviceKind());
    assertEquals(Proposer.COMMAND, s.harness().proposerKind());
    assertEquals(Finetune.LORA, s.finetune());
    assertEquals(null, ExperimentSpec.defaults().model().dtypeKind());
  }

  @Test
  void activityInputsCarryTheSameJsonThroughTemporalsConverter() throws Exception {
    var converter = DefaultDataConverter.newDefaultInstance();
    ExperimentSpec s = SpecJson.parse("{\"model\": {\"source\": \"huggingface\", \"path\": \"/m\"}}");
    BaseModelRequest req = BaseModelRequest.of(s, TaskRef.of(s), 3);
    String json = converter.toPayload(req).orElseThrow().getData().toStringUtf8();
    assertTrue(json.contains("\"finetune\":\"lora\""), json);
    assertEquals(req, converter.fromPayload(converter.toPayload(req).orElseThrow(),
        BaseModelRequest.class, BaseModelRequest.class));
  }
}
