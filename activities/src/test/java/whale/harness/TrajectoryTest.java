package whale.harness;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import whale.chat.ChatCall;
import whale.chat.ChatTemplate;
import whale.chat.ChatTemplateTest;
import whale.chat.FunctionCall;
import whale.chat.Message;
import whale.model.SftExample;
import whale.model.hf.HfTokenizer;

/** Multi-turn episodes as one SFT sequence, the loss on the model's turns only. */
class TrajectoryTest {
  /** Ids of every part, tokenized on its own as HfModel does, and whether each id is trained. */
  static int[][] tokens(SftExample ex, HfTokenizer tok) {
    List<Integer> ids = new ArrayList<>();
    List<Integer> mask = new ArrayList<>();
    for (int p = 0; p < ex.parts().size(); p++) {
      for (int id : tok.encodeContinuation(ex.parts().get(p))) {
        ids.add(id);
        mask.add(SftExample.trained(p) ? 1 : 0);
      }
    }
    return new int[][] {ids.stream().mapToInt(i -> i).toArray(), mask.stream().mapToInt(i -> i).toArray()};
  }

  static int[] ints(JsonNode a) {
    int[] out = new int[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).asInt();
    }
    return out;
  }

  @Test
  void theMaskIsTransformersAssistantTokensMask() throws Exception {
    JsonNode c = ChatTemplateTest.golden().get("cases").get(6);
    List<Message> messages = whale.chat.ChatJson.messages(c.get("messages"));
    ChatTemplate template = ChatTemplate.of(ChatTemplateTest.chat("generation"));
    SftExample ex = Trajectory.conversation(messages, List.of(), Set.of(2, 4), template);
    int[][] t = tokens(ex, HfTokenizer.load(ChatTemplateTest.chat("generation")));
    assertArrayEquals(ints(c.get("tokens")), t[0], "the same token ids as apply_chat_template");
    assertArrayEquals(ints(c.get("assistant_masks")), t[1], "the same mask as return_assistant_tokens_mask");
  }

  @Test
  void withoutGenerationBlocksTheTurnsComeFromThePrefixRenderings() throws Exception {
    // Qwen2.5's template re-renders tool calls in its own form and sends tool results as user turns
    JsonNode c = ChatTemplateTest.golden().get("cases").get(5);
    List<Message> messages = whale.chat.ChatJson.messages(c.get("messages"));
    ChatTemplate template = ChatTemplate.of(ChatTemplateTest.chat("qwen2.5"));
    SftExample ex = Trajectory.conversation(messages, List.of(), Set.of(1, 3), template);
    assertEquals(c.get("text").asText(), String.join("", ex.parts()), "the parts are the whole rendering");
    List<String> trained = new ArrayList<>();
    for (int p = 1; p < ex.parts().size(); p += 2) {
      if (!ex.parts().get(p).isEmpty()) {
        trained.add(ex.parts().get(p));
      }
    }
    assertEquals(List.of(
        "<tool_call>\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"12 + 7\"}}\n</tool_call><|im_end|>",
        "He has 19 apples.<|im_end|>"), trained, "each model turn with its end-of-turn token, nothing else");
  }

  @Test
  void chatCallsOfOneConversationAreOneExampleAndGenerateCallsStayAlone() {
    ChatTemplate t = ChatTemplate.builtin();
    List<Message> first = List.of(Message.system("Count."), Message.user("One. Two."));
    String reply1 = "<tool_call>{\"name\": \"sentences\", \"arguments\": {\"input\": \"One. Two.\"}}</tool_call>";
    List<Message> second = new ArrayList<>(first);
    second.add(Message.assistant("", List.of(new FunctionCall("sentences", java.util.Map.of("input", "One. Two.")))));
    second.add(Message.tool("sentences", "One.\nTwo."));
    List<ModelCall> calls = List.of(
        new ModelCall(0, "Q: warm up\nA:", 4, 1, "ok\n", 1, 1),
        new ModelCall(1, t.prompt(first, List.of()), 32, 2, reply1, 1, 1, new ChatCall(first, List.of())),
        new ModelCall(2, t.prompt(second, List.of()), 32, 3, "2\n", 1, 1, new ChatCall(second, List.of())),
        // a second, independent conversation (a vote): its own example
        new ModelCall(3, t.prompt(first, List.of()), 32, 4, "3\n", 1, 1, new ChatCall(first, List.of())));
    List<SftExample> ex = Trajectory.examples(calls, t);
    assertEquals(List.of(
        new SftExample("Q: warm up\nA:", "ok\n"),
        new SftExample(List.of("Count.\nQ: One. Two.\nA: ", reply1 + "\n", "Tool sentences: One.\nTwo.\nA: ", "2\n")),
        new SftExample(List.of("Count.\nQ: One. Two.\nA: ", "3\n"))), ex);
  }
}
