package whale.workers;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Malformed payloads for whale's update and signals (wrong types, NaN, negative and huge numbers,
 * unknown fields, null, not an object), each with the text its rejection must contain: the field's
 * name and what is wrong. Shared by BadInputTest (Java client) and CliIT (the temporal CLI).
 */
public final class BadPayloads {
  private BadPayloads() {}

  /** Each malformed adjust payload and a fragment its rejection must contain (the field's name). */
  public static final Map<String, String> UPDATES = new LinkedHashMap<>();
  /** Each malformed phaseProgress payload and a fragment its recorded rejection must contain. */
  public static final Map<String, String> SIGNALS = new LinkedHashMap<>();

  static {
    UPDATES.put("{\"weightBudgetEpochs\": \"2\"}", "weightBudgetEpochs: expected a number, got the string \"2\"");
    UPDATES.put("{\"weightBudgetEpochs\": true}", "weightBudgetEpochs: expected a number, got true");
    UPDATES.put("{\"weightBudgetEpochs\": [1.5]}", "weightBudgetEpochs: expected a number, got an array");
    UPDATES.put("{\"weightBudgetEpochs\": \"NaN\"}", "weightBudgetEpochs: must be in (0, 1000], got NaN");
    UPDATES.put("{\"weightBudgetEpochs\": -1}", "weightBudgetEpochs: must be in (0, 1000], got -1.0");
    UPDATES.put("{\"weightBudgetEpochs\": 1e300}", "weightBudgetEpochs: must be in (0, 1000], got 1.0E300");
    UPDATES.put("{\"weightBudgetEpochs\": 1e400}", "weightBudgetEpochs: must be in (0, 1000], got Infinity");
    UPDATES.put("{\"weightBudgetEpochs\": null}", "nothing to change");
    UPDATES.put("{\"weightBudgetEpoch\": 2}", "weightBudgetEpoch: unknown field (known: harnessMaxIterations, "
        + "harnessPatience, patienceEpochs, weightBudgetEpochs)");
    UPDATES.put("{\"weightBudgetEpochs\": 2, \"extra\": {}}", "extra: unknown field");
    UPDATES.put("{\"harnessPatience\": 2.5}", "harnessPatience: expected an integer, got the number 2.5");
    UPDATES.put("{\"harnessPatience\": 99999999999}", "harnessPatience: out of range, got the number 99999999999");
    UPDATES.put("null", "payload: expected an object, got null");
    UPDATES.put("[1, 2]", "payload: expected an object, got an array");
    UPDATES.put("\"more\"", "payload: expected an object, got the string \"more\"");

    String ok = "\"phaseWorkflowId\": \"p/r1-weight\", \"steps\": 0, \"harnessIteration\": 0, "
        + "\"rollouts\": 10, \"testRollouts\": 0, \"checkpointRef\": null";
    String event = "{\"kind\": \"rsft-step\", \"phase\": \"weight\", \"round\": 1, \"step\": 1, "
        + "\"iteration\": 0, \"rollouts\": 10}";
    SIGNALS.put("{\"seq\": \"x\", \"event\": " + event + ", " + ok + "}", "seq: expected an integer, got the string \"x\"");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event + ", " + ok + ", \"bogus\": 1}", "bogus: unknown field");
    SIGNALS.put("{\"seq\": -3, \"event\": " + event + ", " + ok + "}", "seq: must be at least 1, got -3");
    SIGNALS.put("{\"seq\": 1, \"event\": null, " + ok + "}", "event: must be set");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event.replace("\"round\": 1", "\"round\": \"one\"") + ", " + ok + "}",
        "event.round: expected an integer, got the string \"one\"");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event.replace("rsft-step", "test-eval") + ", " + ok + "}",
        "event.meanAt8: a test-eval event needs its mean@k");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event.replace("}", ", \"meanAt8\": \"NaN\"}") + ", " + ok + "}",
        "event.meanAt8: must be in [0, 1], got NaN");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event + ", " + ok.replace("\"rollouts\": 10", "\"rollouts\": -10") + "}",
        "rollouts: must not be negative, got -10");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event + ", " + ok.replace("\"steps\": 0", "\"steps\": 3") + "}",
        "checkpointRef: must be sha256:<64 hex digits> once steps > 0, got null");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event + ", " + ok.replace("\"phaseWorkflowId\": \"p/r1-weight\", ", "") + "}",
        "phaseWorkflowId: must name the reporting phase workflow");
    SIGNALS.put("{\"seq\": 1, \"event\": " + event + "}", "steps: missing, expected an integer");
    SIGNALS.put("null", "payload: expected an object, got null");
    SIGNALS.put("42", "payload: expected an object, got the number 42");
  }

}
