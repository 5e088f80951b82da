package whale.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import whale.chat.Message;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.sandbox.InProcessExecutor;
import whale.sandbox.SandboxExecutor;
import whale.sandbox.SandboxHost;
import whale.sandbox.SandboxPool;
import whale.task.math.MathTask;
import whale.task.Split;
import whale.task.TaskProblem;

/** Chat harnesses through the episode runner, in process and in the sandbox. */
@Timeout(180)
class ChatEpisodeTest {
  static final MathTask TASK = new MathTask(1, 4, 6, 4);

  /**
   * A model that first calls the "sentences" tool, then answers with the number of lines the tool
   * returned; a malformed call when the question mentions "bad".
   */
  static final class ToolUser implements Generator {
    final List<GenerationRequest> seen = new ArrayList<>();

    @Override
    public synchronized List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
      List<Completion> out = new ArrayList<>();
      for (GenerationRequest r : requests) {
        seen.add(r);
        String text;
        int at = r.prompt().lastIndexOf("Tool sentences: ");
        if (at < 0) {
          text = "<tool_call>{\"name\": \"sentences\", \"arguments\": {\"input\": \"One. Two.\"}}</tool_call>"
              + "<tool_call>{\"name\": 7}</tool_call>";
        } else {
          text = "There are 2 sentences.\nSTOP here and not beyond";
        }
        out.add(new Completion(text, r.prompt().length(), text.length()));
      }
      return out;
    }
  }

  static final String CHAT_HARNESS = """
      import whale.harness.*;
      import whale.chat.*;
      import whale.task.Problem;
      import java.util.*;

      public class Counting extends ChatHarness {
        protected String systemPrompt() { return "Count sentences with the tool."; }
        protected String userPrompt(Problem p) { return p.question(); }
        public HarnessResult solve(Problem p, HarnessContext ctx) {
          HarnessResult r = super.solve(p, ctx);
          return HarnessResult.of(r.answer().replaceAll("[^0-9]", ""));
        }
      }
      """;

  @Test
  void aToolUsingChatHarnessRunsTheSameInProcessAndInTheSandbox() {
    List<TaskProblem> problems = TASK.split(Split.HARNESS).subList(0, 3);
    EpisodeRunner.Config config = EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofSeconds(5));
    ToolUser local = new ToolUser();
    List<EpisodeResult> in = new InProcessExecutor(new HarnessCompiler()).run(local, TASK, CHAT_HARNESS,
        problems, 2, 5, config, l -> { });
    List<EpisodeResult> sb;
    try (SandboxExecutor sandbox = new SandboxExecutor(SandboxPool.forThisJvm(1, 256), new SandboxHost(), 20, 3000)) {
      sb = sandbox.run(new ToolUser(), TASK, CHAT_HARNESS, problems, 2, 5, config, l -> { });
    }
    assertEquals(in, sb);
    for (EpisodeResult r : sb) {
      assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
      assertEquals("2", r.answer());
      assertEquals(2, r.turns());
      assertEquals(List.of(new ToolCall("sentences", "One. Two.", "One.\nTwo.")), r.toolCalls());
      ModelCall second = r.modelCalls().get(1);
      assertNotNull(second.chat(), "a chat call keeps its messages in the trace");
      List<Message> m = second.chat().messages();
      assertEquals(List.of("system", "user", "assistant", "tool", "tool"), m.stream().map(Message::role).toList());
      assertEquals("tool call 2: \"name\" must be a non-empty string", m.get(3).content(),
          "a malformed call reaches the harness as an error it answers with");
      assertEquals("One.\nTwo.", m.get(4).content());
      // the builtin template: plain turns, the tool calls as the model wrote them, tool results
      assertEquals("Count sentences with the tool.\nQ: " + problemOf(r, problems).question() + "\n"
          + "A: <tool_call>{\"name\": \"sentences\", \"arguments\": {\"input\": \"One. Two.\"}}</tool_call>\n"
          + "Tool error: tool call 2: \"name\" must be a non-empty string\nTool sentences: One.\nTwo.\nA: ",
          second.prompt());
    }
    assertTrue(local.seen.stream().allMatch(GenerationRequest::chat));
  }

  /**
   * A chat turn's own temperature reaches the model, lowered to the spec's bound, the same in
   * process and through the sandbox (where the worker, not the untrusted sandbox, applies the bound);
   * a generate call and a turn without one sample at the run's temperature.
   */
  @Test
  void aTurnsOwnTemperatureReachesTheModelWithinTheBound() {
    String source = """
        import whale.harness.*;
        import whale.chat.*;
        import whale.task.Problem;
        import java.util.*;

        public class Temperatures implements Harness {
          public HarnessResult solve(Problem p, HarnessContext ctx) {
            ctx.generate("Q: " + p.question() + "\\nA:", 4);
            ctx.chat(List.of(Message.user("a")), ChatOptions.of(8));
            ctx.chat(List.of(Message.user("b")), ChatOptions.of(8).withTemperature(0));
            ctx.chat(List.of(Message.user("c")), ChatOptions.of(8).withTemperature(5.0));
            return HarnessResult.of("1");
          }
        }
        """;
    List<TaskProblem> problems = TASK.split(Split.HARNESS).subList(0, 2);
    EpisodeRunner.Config config = EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofSeconds(5))
        .withSampling(new SamplingParams(0.7, 20)).withMaxTemperature(1.5);
    java.util.function.Supplier<ToolUser> model = ToolUser::new;
    ToolUser local = model.get();
    new InProcessExecutor(new HarnessCompiler()).run(local, TASK, source, problems, 1, 5, config, l -> { });
    ToolUser remote = model.get();
    try (SandboxExecutor sandbox = new SandboxExecutor(SandboxPool.forThisJvm(1, 256), new SandboxHost(), 20, 3000)) {
      sandbox.run(remote, TASK, source, problems, 1, 5, config, l -> { });
    }
    for (ToolUser u : List.of(local, remote)) {
      java.util.Map<String, java.util.Set<Double>> byPrompt = new java.util.TreeMap<>();
      for (GenerationRequest r : u.seen) {
        String key = r.chat() ? r.prompt() : "generate";
        byPrompt.computeIfAbsent(key, k -> new java.util.HashSet<>()).add(r.temperature());
      }
      java.util.Map<String, java.util.Set<Double>> want = new java.util.TreeMap<>();
      want.put("generate", new java.util.HashSet<>(java.util.Collections.singleton(null)));
      want.put("Q: a\nA: ", new java.util.HashSet<>(java.util.Collections.singleton(null)));
      want.put("Q: b\nA: ", java.util.Set.of(0.0));
      want.put("Q: c\nA: ", java.util.Set.of(1.5));
      assertEquals(want, byPrompt, u == local ? "in process" : "in the sandbox");
    }
  }

  static TaskProblem problemOf(EpisodeResult r, List<TaskProblem> problems) {
    return problems.stream().filter(p -> p.id().equals(r.problemId())).findFirst().orElseThrow();
  }

  @Test
  void stopStringsCutTheTurnAndGenerateCallsStayPlain() {
    String source = """
        import whale.harness.*;
        import whale.chat.*;
        import whale.task.Problem;
        import java.util.*;

        public class Stops implements Harness {
          public HarnessResult solve(Problem p, HarnessContext ctx) {
            ctx.generate("Q: " + p.question() + "\\nA:", 4);
            AssistantTurn t = ctx.chat(List.of(Message.user("Tool sentences: x")),
                ChatOptions.of(32).withStop(List.of("STOP")));
            return HarnessResult.of(t.content());
          }
        }
        """;
    ToolUser g = new ToolUser();
    List<EpisodeResult> rs = new InProcessExecutor(new HarnessCompiler()).run(g, TASK, source,
        TASK.split(Split.HARNESS).subList(0, 1), 1, 5, EpisodeRunner.Config.defaults(), l -> { });
    EpisodeResult r = rs.get(0);
    assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
    assertEquals("There are 2 sentences.\nSTOP", r.answer());
    assertNull(r.modelCalls().get(0).chat());
    assertEquals(List.of(false, true), g.seen.stream().map(GenerationRequest::chat).toList());
  }
}
