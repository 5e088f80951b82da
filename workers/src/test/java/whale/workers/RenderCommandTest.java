package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code whale render} against transformers' apply_chat_template on the chat fixtures
 * (make_chat_fixtures.py): the same text, and with --json the same tokens.
 */
class RenderCommandTest {
  static final Path CHAT = HfCliTest.FIXTURES.resolve("chat");
  static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path tmp;

  @Test
  void rendersEveryGoldenConversationLikeTransformers() throws Exception {
    JsonNode cases = JSON.readTree(CHAT.resolve("golden.json").toFile()).get("cases");
    for (int i = 0; i < cases.size(); i++) {
      JsonNode c = cases.get(i);
      Path messages = Files.writeString(tmp.resolve("m" + i + ".json"), c.get("messages").toString());
      Path tools = Files.writeString(tmp.resolve("t" + i + ".json"), c.get("tools").toString());
      String dir = CHAT.resolve(c.get("template").asText()).toString();
      String[] gen = c.get("add_generation_prompt").asBoolean() ? new String[0]
          : new String[] {"--no-generation-prompt"};
      String text = HfCliTest.ok(concat(new String[] {"render", "--model", dir, "--messages",
          messages.toString(), "--tools", tools.toString()}, gen));
      assertEquals(c.get("text").asText(), text, "case " + i);
      JsonNode j = JSON.readTree(HfCliTest.ok(concat(new String[] {"render", "--model", dir,
          "--messages", messages.toString(), "--tools", tools.toString(), "--json"}, gen)));
      assertEquals(c.get("text").asText(), j.get("text").asText());
      assertEquals(c.get("tokens"), j.get("tokens"), "case " + i + " tokens");
    }
  }

  @Test
  void badInputIsNamed() throws Exception {
    Path bad = Files.writeString(tmp.resolve("bad.json"), "[{\"role\": \"robot\", \"content\": \"hi\"}]");
    String err = HfCliTest.fails("render", "--model", "builtin", "--messages", bad.toString());
    assertTrue(err.contains("message 0: message role must be one of [system, user, assistant, tool], got 'robot'"), err);
    Path notJson = Files.writeString(tmp.resolve("x.json"), "[{");
    assertTrue(HfCliTest.fails("render", "--model", "builtin", "--messages", notJson.toString())
        .contains("x.json: not JSON"));
    Path ok = Files.writeString(tmp.resolve("ok.json"), "[{\"role\": \"user\", \"content\": \"7+5?\"}]");
    assertTrue(HfCliTest.fails("render", "--model", tmp.resolve("none").toString(), "--messages", ok.toString())
        .contains("--model: no such directory"));
    // a directory with no template says where it looked
    assertTrue(HfCliTest.fails("render", "--model", tmp.toString(), "--messages", ok.toString())
        .contains("no chat template (neither chat_template.jinja nor chat_template in tokenizer_config.json)"));
    assertEquals("Q: 7+5?\nA: ", HfCliTest.ok("render", "--model", "builtin", "--messages", ok.toString()));
  }

  static String[] concat(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
