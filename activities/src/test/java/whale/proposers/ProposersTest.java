package whale.proposers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessCompiler;
import whale.task.math.MathTemplates;

@Timeout(60)
class ProposersTest {
  static final ObjectMapper JSON = new ObjectMapper();

  static Path archive(Path dir) throws Exception {
    Path a = dir.resolve("archive");
    Path c = a.resolve("01-00-h0");
    Files.createDirectories(c);
    Files.writeString(c.resolve("source.java"), MathTemplates.initialHarnessSource());
    Files.writeString(c.resolve("meta.json"), "{\"name\":\"h0\"}");
    Files.writeString(c.resolve("scores.json"), "{\"success\":0.25,\"meanTurns\":1.0}");
    Files.writeString(c.resolve("traces.json"), "[]");
    Files.writeString(a.resolve("summary.json"), "[{\"name\":\"h0\",\"success\":0.25}]");
    Files.writeString(a.resolve("pareto.json"), "{\"front\":[{\"name\":\"h0\"}]}");
    return a;
  }

  @Test
  void commandProposerRunsAScriptInACopyOfTheArchiveAndCollectsItsFiles(@TempDir Path dir) throws Exception {
    Path a = archive(dir);
    Path script = dir.resolve("agent.sh");
    String src = MathTemplates.initialHarnessSource();
    Files.writeString(script, """
        #!/bin/sh
        set -e
        test -f summary.json && test -f pareto.json && test -f 01-00-h0/source.java
        grep -q "AssistantTurn chat(List<Message> messages, ChatOptions options)" API.md
        echo "agent sees $(ls | wc -l) entries, writes $WHALE_CANDIDATES"
        touch scribble-in-copy.txt
        i=0
        while [ $i -lt "$WHALE_CANDIDATES" ]; do
          sed "s/public final class [A-Za-z0-9_]*/public final class Cand$i/" 01-00-h0/source.java > "$WHALE_CANDIDATES_DIR/Cand$i.java"
          printf '{"name":"cand-%s","hypothesis":"same as h0","changes":"renamed","axis":"copy"}' $i > "$WHALE_CANDIDATES_DIR/Cand$i.json"
          i=$((i+1))
        done
        """);
    script.toFile().setExecutable(true);
    List<HarnessCandidate> got = new CommandProposer(List.of("sh", script.toString()), Duration.ofSeconds(30))
        .propose(a, dir.resolve("work"), 2, 3, 7);
    assertEquals(2, got.size());
    assertEquals("cand-0", got.get(0).name());
    assertEquals("same as h0", got.get(0).hypothesis());
    assertTrue(got.get(1).source().contains("public final class Cand1"));
    assertTrue(new HarnessCompiler().tryCompile(got.get(0).source()).ok());
    assertTrue(Files.notExists(a.resolve("scribble-in-copy.txt")), "the archive itself is untouched");
    assertTrue(Files.notExists(a.resolve("API.md")), "API.md is written into the copy only");
  }

  @Test
  void commandProposerIsKilledAfterItsTimeoutAndKeepsWhatWasWritten(@TempDir Path dir) throws Exception {
    Path a = archive(dir);
    String cmd = "cp 01-00-h0/source.java \"$WHALE_CANDIDATES_DIR/Late.java\"; sleep 600";
    long t0 = System.nanoTime();
    List<HarnessCandidate> got = new CommandProposer(List.of("sh", "-c", cmd), Duration.ofSeconds(2))
        .propose(a, dir.resolve("work"), 3, 1, 1);
    assertTrue((System.nanoTime() - t0) / 1e9 < 20);
    assertEquals(1, got.size());
    assertEquals("Late", got.get(0).name());
  }

  @Test
  void openAiProposerSpeaksChatCompletionsToARealHttpServer(@TempDir Path dir) throws Exception {
    Path a = archive(dir);
    AtomicReference<JsonNode> seen = new AtomicReference<>();
    AtomicReference<String> auth = new AtomicReference<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/chat/completions", ex -> {
      seen.set(JSON.readTree(ex.getRequestBody()));
      auth.set(ex.getRequestHeaders().getFirst("Authorization"));
      String src = MathTemplates.initialHarnessSource().replaceFirst("public class (\\w+)", "public class Llm0");
      ObjectNode cands = JSON.createObjectNode();
      ObjectNode c = cands.putArray("candidates").addObject();
      c.put("name", "llm-0").put("hypothesis", "h").put("changes", "c").put("axis", "prompt").put("source", src);
      ObjectNode resp = JSON.createObjectNode();
      resp.put("id", "chatcmpl-1").put("object", "chat.completion");
      resp.putArray("choices").addObject().put("index", 0).put("finish_reason", "stop").putObject("message")
          .put("role", "assistant").put("content", "Here you go:\n```json\n" + cands + "\n```");
      byte[] body = JSON.writeValueAsBytes(resp);
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.start();
    try {
      String base = "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
      List<HarnessCandidate> got = new OpenAiProposer(base, "tiny-coder", "sk-test", Duration.ofSeconds(20))
          .propose(a, 3, 5);
      assertEquals(1, got.size());
      assertEquals("llm-0", got.get(0).name());
      assertTrue(new HarnessCompiler().tryCompile(got.get(0).source()).ok());
      assertEquals("tiny-coder", seen.get().path("model").asText());
      assertEquals("Bearer sk-test", auth.get());
      String user = seen.get().path("messages").path(1).path("content").asText();
      assertTrue(user.contains("pareto.json") && user.contains("01-00-h0/source.java"), user);
    } finally {
      server.stop(0);
    }
  }
}
