package whale.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * whale's rendering of chat templates against transformers' {@code apply_chat_template}, byte for
 * byte, on the fixtures of {@code make_chat_fixtures.py}: ChatML, Qwen2.5-Instruct's template with
 * tools and tool calls (its tojson output included), and a template with generation blocks.
 */
public class ChatTemplateTest {
  static final ObjectMapper JSON = new ObjectMapper();

  public static Path chat(String name) {
    try {
      return Path.of(ChatTemplateTest.class.getResource("/hf/chat/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  public static JsonNode golden() throws Exception {
    return JSON.readTree(chat("golden.json").toFile());
  }

  @Test
  void rendersEveryFixtureConversationExactlyAsTransformers() throws Exception {
    JsonNode g = golden();
    int n = 0;
    for (JsonNode c : g.get("cases")) {
      ChatTemplate t = ChatTemplate.of(chat(c.get("template").asText()));
      String text = t.render(ChatJson.messages(c.get("messages")), ChatJson.tools(c.path("tools")),
          c.get("add_generation_prompt").asBoolean()).text();
      assertEquals(c.get("text").asText(), text, "case " + n + " (" + c.get("template").asText()
          + ", transformers " + g.get("transformers").asText() + ")");
      n++;
    }
    assertEquals(7, n);
  }

  @Test
  void generationBlocksAreTheAssistantsTurnsWithTheirEndOfTurnToken() throws Exception {
    JsonNode c = golden().get("cases").get(6);
    ChatTemplate.Rendered r = ChatTemplate.of(chat("generation")).render(ChatJson.messages(c.get("messages")), List.of(), false);
    List<String> marked = r.generationSpans().stream().map(s -> r.text().substring(s[0], s[1])).toList();
    assertEquals(List.of("Let me add: 12 + 7 = 19.<|im_end|>", "Yes, 19.<|im_end|>"), marked);
  }

  @Test
  void pythonsJsonDumpsLayout() {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("a", List.of(1, 2.5, true));
    m.put("é", null);
    m.put("q", "\"\\\n\u0001/");
    assertEquals("{\"a\": [1, 2.5, true], \"é\": null, \"q\": \"\\\"\\\\\\n\\u0001/\"}", PyJson.dumps(m));
    assertEquals("{\n  \"a\": [\n    1,\n    2.5,\n    true\n  ],\n  \"é\": null,\n  \"q\": \"\\\"\\\\\\n\\u0001/\"\n}",
        PyJson.dumps(m, 2));
    // repr(float): exponent outside [1e-4, 1e16)
    assertEquals(List.of("0.0001", "1e-05", "1e+16", "1234567890123456.0", "1.5e-05", "-0.5", "100.0", "0.1"),
        List.of(0.0001, 0.00001, 1e16, 1234567890123456.0, 1.5e-5, -0.5, 100.0, 0.1).stream()
            .map(PyJson::floatRepr).toList());
  }

  @Test
  void aTemplateThatRaisesNamesItselfAndTheMessage() {
    ChatTemplate t = new ChatTemplate("{% if messages[0].role != 'user' %}{{ raise_exception('Conversation "
        + "must start with a user message') }}{% endif %}{{ messages[0].content }}", "t.jinja", "", "");
    assertEquals("hi", t.prompt(List.of(Message.user("hi")), List.of()));
    ChatTemplate.ChatTemplateException e = assertThrows(ChatTemplate.ChatTemplateException.class,
        () -> t.prompt(List.of(Message.assistant("x")), List.of()));
    assertEquals("t.jinja: raise_exception: Conversation must start with a user message", e.getMessage());
  }

  @Test
  void aTemplateThatDoesNotParseNamesItsLine() {
    ChatTemplate t = new ChatTemplate("ok\n{% for m in messages %}{{ m.content }}", "broken.jinja", "", "");
    ChatTemplate.ChatTemplateException e = assertThrows(ChatTemplate.ChatTemplateException.class,
        () -> t.prompt(List.of(Message.user("hi")), List.of()));
    assertTrue(e.getMessage().startsWith("broken.jinja: line 2: "), e.getMessage());
  }

  @Test
  void theBuiltinTemplateIsPlainTurns() {
    ChatTemplate.Rendered r = ChatTemplate.builtin().render(List.of(Message.system("Solve."), Message.user("7+5?"),
        Message.assistant("12"), Message.tool("calculator", "12")), List.of(), true);
    assertEquals("Solve.\nQ: 7+5?\nA: 12\nTool calculator: 12\nA: ", r.text());
    assertEquals(List.of("12\n"), r.generationSpans().stream().map(s -> r.text().substring(s[0], s[1])).toList());
  }
}
