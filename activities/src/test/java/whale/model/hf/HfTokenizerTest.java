package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HfTokenizerTest {
  @TempDir Path tmp;

  @Test
  void encodesLikeTransformersAndRoundTrips() throws IOException {
    JsonNode g = HfFixtures.golden("llama");
    try (HfTokenizer tok = HfTokenizer.load(HfFixtures.dir("llama"))) {
      for (JsonNode p : g.path("prompts")) {
        int[] ids = tok.encode(p.path("text").asText());
        assertArrayEquals(HfFixtures.ints(p.path("ids")), ids, p.path("text").asText());
        assertEquals(p.path("text").asText(), tok.decode(ids));
      }
    }
  }

  @Test
  void doesNotTruncateAt512() throws IOException {
    String text = "Café, naïve, 東京 🙂 e2e4 e7e5 ".repeat(200);
    try (HfTokenizer tok = HfTokenizer.load(HfFixtures.dir("qwen3"))) {
      int[] ids = tok.encode(text);
      assertTrue(ids.length > 2000, "tokens: " + ids.length);
      assertEquals(text, tok.decode(ids));
    }
  }

  @Test
  void specialIdsResolvedAsTransformersDoes() throws IOException {
    try (HfTokenizer llama = HfTokenizer.load(HfFixtures.dir("llama"));
        HfTokenizer mistral = HfTokenizer.load(HfFixtures.dir("mistral"))) {
      assertEquals(List.of(2), llama.eosIds());
      assertEquals(0, llama.padId());
      assertEquals(List.of(2, 0), mistral.eosIds(), "generation_config.json's list wins");
    }
    // without generation_config.json and config ids, the tokenizer's eos_token (<|im_end|>) is used
    Path dir = tmp.resolve("m");
    Files.createDirectories(dir);
    for (String f : List.of("tokenizer.json", "tokenizer_config.json", "config.json")) {
      Files.copy(HfFixtures.dir("mistral").resolve(f), dir.resolve(f));
    }
    ObjectMapper json = new ObjectMapper();
    ObjectNode c = (ObjectNode) json.readTree(dir.resolve("config.json").toFile());
    c.remove("eos_token_id");
    c.remove("pad_token_id");
    json.writeValue(dir.resolve("config.json").toFile(), c);
    try (HfTokenizer tok = HfTokenizer.load(dir)) {
      assertEquals(List.of(2), tok.eosIds());
      assertEquals(0, tok.padId(), "<|endoftext|> from tokenizer_config.json");
    }
  }

  @Test
  void missingTokenizerJson() {
    String msg = assertThrows(IOException.class, () -> HfTokenizer.load(tmp)).getMessage();
    assertTrue(msg.contains(tmp.toString()) && msg.contains("no tokenizer.json"), msg);
  }
}
