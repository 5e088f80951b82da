package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.ActivityRuntime;
import whale.harness.EpisodeResult;
import whale.harness.ModelCall;
import whale.model.SftExample;
import whale.workflows.ExperimentSpec;
import whale.workflows.RunEvent;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleWorkflow;

/**
 * A chat harness through a whole WHALE run on the builtin model: the base is pretrained on the
 * math task's chat corpus (one-step problems as tool-using conversations), the harness phase
 * scores the proposed {@code examples/harnesses/MathCalc.java} (a multi-turn agent that calls the
 * task's calc tool) against the completion harness h0 and accepts it, and the next weight phase's
 * RSFT trains on its conversations: the model's tool calls and answers, not the tool's results.
 *
 * <p>The base is small (600 pretraining steps, about 3.5 of the test's 4.5 minutes): measured, h0
 * scores 1 of 64 harness problems and MathCalc 7 of 64, and RSFT accepts 55 conversations. Seeded
 * training is bit-identical across processes (CrossProcessDeterminismTest), so that spread is 0;
 * at 800 steps (examples/math-chat.json) MathCalc scores 0.92.
 */
class ChatRunTest {
  static final Path MATH_CALC = Path.of("../examples/harnesses/MathCalc.java").toAbsolutePath()
      .normalize();
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path tmp;

  @RegisterExtension
  static final TestWorkflowExtension temporal = WhaleTestServer.extension();

  ActivityRuntime runtime;

  @BeforeEach
  void startWorkers(TestWorkflowEnvironment env) {
    runtime = ActivityRuntime.open(tmp.resolve("artifacts"));
    WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
    env.start();
  }

  @Test
  void theHarnessPhaseAcceptsAToolUsingChatHarnessAndRsftTrainsOnItsConversations(
      WorkflowClient client) throws Exception {
    ExperimentSpec spec = SpecJson.parse("""
        {
          "name": "math-chat-test",
          "seed": 7,
          "data": { "seed": 1234, "weightProblems": 32, "harnessProblems": 64, "testProblems": 8 },
          "model": { "contextLength": 192, "pretrainSteps": %d, "pretrainBatch": 64,
                     "pretrainLearningRate": 0.008, "pretrainDocuments": 20000,
                     "pretrainCorpus": "chat" },
          "rsft": { "promptsPerStep": 16, "samplesPerPrompt": 8, "temperature": 0.7, "topK": 20,
                    "minibatch": 32, "learningRate": 0.0001 },
          "phases": { "weightEpochsPerPhase": 0.5, "harnessIterationsPerPhase": 2,
                      "weightBudgetEpochs": 1.0 },
          "harness": { "proposer": "command", "candidatesPerIteration": 1,
                       "command": ["sh", "-c", "cp '%s' \\"$WHALE_CANDIDATES_DIR\\"/"] },
          "eval": { "k": 4, "everyEpochs": 0 }
        }
        """.formatted(Integer.getInteger("chat.pretrain", 600), MATH_CALC));
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId("math-chat")
        .setWorkflowExecutionTimeout(Duration.ofMinutes(20)).build());
    WhaleResult r = wf.run(spec, null);
    List<RunEvent> history = wf.history();
    history.stream().filter(e -> !e.kind().equals("test-eval"))
        .forEach(e -> System.out.println("math-chat event " + e));

    // the harness phase: h0 (a completion harness) against the proposed chat agent, which wins
    List<RunEvent> candidates = history.stream().filter(e -> e.kind().equals("candidate")).toList();
    double h0 = candidates.stream().filter(e -> e.note().startsWith("h0")).mapToDouble(RunEvent::success)
        .max().orElseThrow();
    RunEvent accepted = history.stream().filter(e -> e.kind().equals("accept")).reduce((a, b) -> b)
        .orElseThrow();
    assertEquals("MathCalc", accepted.note(), "the chat agent won the harness phase: " + history);
    double chat = accepted.success();
    assertTrue(chat > h0, "MathCalc " + chat + " over h0 " + h0);
    assertEquals(2, r.steps());

    // the next weight phase trained on its episodes
    List<RunEvent> after = history.stream()
        .filter(e -> e.kind().equals("rsft-step") && e.round() == 2).toList();
    assertFalse(after.isEmpty(), history.toString());
    assertTrue(after.stream().anyMatch(e -> e.accepted() > 0), "its rollouts were accepted: " + after);

    // what it trained on, from that phase's RSFT step results: the accepted episodes' chat calls
    // (each step of the agent a conversation: question, calc call, result, answer) as sequences
    // whose trained parts are the model's turns, the tool call included, and nothing the tool said
    int toolConversations = 0;
    int examples = 0;
    for (var e : client.fetchHistory("math-chat/r2-weight").getEvents()) {
      if (!e.hasActivityTaskCompletedEventAttributes()) {
        continue;
      }
      JsonNode result = JSON.readTree(e.getActivityTaskCompletedEventAttributes().getResult()
          .getPayloads(0).getData().toStringUtf8());
      if (!result.has("rolloutsRef")) {
        continue;
      }
      List<EpisodeResult> episodes = JSON.readValue(
          runtime.store().getString(result.get("rolloutsRef").asText()),
          new TypeReference<List<EpisodeResult>>() { });
      int trainedHere = 0;
      for (EpisodeResult ep : episodes) {
        if (ep.reward() <= 0.5) {
          continue;
        }
        assertTrue(ep.modelCalls().stream().allMatch(c -> c.chat() != null), "chat calls only: " + ep);
        assertFalse(ep.toolCalls().stream().noneMatch(t -> t.name().equals("calc")), "it used calc: " + ep);
        for (SftExample ex : ep.sftExamples()) {
          trainedHere++;
          String trained = trainedText(ex);
          String context = contextText(ex);
          if (trained.contains("<tool_call>{\"name\": \"calc\"")) {
            toolConversations++;
            assertTrue(ex.parts().size() >= 4, "the call and the answer are two trained turns: " + ex);
            assertTrue(context.contains("Tool calc: "), "the tool's result is context: " + ex);
            assertFalse(trained.contains("Tool calc: "), "the tool's result is not trained: " + ex);
          }
        }
      }
      assertEquals(trainedHere, result.get("sftExamples").asInt(), "every conversation trained once");
      examples += trainedHere;
    }
    System.out.printf("math-chat: h0 %.3f, MathCalc %.3f; %d sequences trained, %d with a calc call%n",
        h0, chat, examples, toolConversations);
    assertTrue(toolConversations > 0, "a tool-using conversation was trained on");
  }

  private static String trainedText(SftExample ex) {
    StringBuilder s = new StringBuilder();
    for (int i = 1; i < ex.parts().size(); i += 2) {
      s.append(ex.parts().get(i)).append('\u0000');
    }
    return s.toString();
  }

  private static String contextText(SftExample ex) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < ex.parts().size(); i += 2) {
      s.append(ex.parts().get(i)).append('\u0000');
    }
    return s.toString();
  }
}
