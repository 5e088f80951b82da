package whale.task.searchqa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.activities.TaskCatalog;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.ExperimentSpec;
import whale.workflows.activities.TaskRef;

/** The optional LLM judge against a real local HTTP server speaking chat completions. */
class LlmJudgeTest {
  @Test
  void judgesWhatExactMatchRejectsAndCachesVerdicts() throws IOException {
    List<JsonNode> requests = new ArrayList<>();
    List<String> auth = new ArrayList<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/chat/completions", ex -> {
      JsonNode req = new ObjectMapper().readTree(ex.getRequestBody());
      synchronized (requests) {
        requests.add(req);
        auth.add(ex.getRequestHeaders().getFirst("Authorization"));
      }
      String user = req.path("messages").path(1).path("content").asText();
      int status = user.contains("Predicted answer: boom") ? 500 : 200;
      // The stand-in judge accepts "Big Apple" for New York and nothing else.
      String verdict = user.contains("Predicted answer: the Big Apple") ? "Yes." : "no";
      byte[] body = ("{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"" + verdict + "\"}}]}")
          .getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(status, body.length);
      try (OutputStream o = ex.getResponseBody()) {
        o.write(body);
      }
    });
    server.start();
    try {
      String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
      LlmJudge judge = new LlmJudge(url, "judge-model", "sk-test", Duration.ofSeconds(10));
      List<String> gold = List.of("New York City", "NYC");
      assertTrue(judge.accepts("Which city?", gold, "the Big Apple"));
      assertTrue(judge.accepts("Which city?", gold, "the Big Apple"));
      assertEquals(1, requests.size(), "the second verdict came from the cache");
      JsonNode r = requests.get(0);
      assertEquals("judge-model", r.path("model").asText());
      assertEquals(0, r.path("temperature").asInt());
      assertTrue(r.path("messages").path(1).path("content").asText().contains("Gold answers: New York City | NYC"));
      assertEquals("Bearer sk-test", auth.get(0));
      assertEquals(false, judge.accepts("Which city?", gold, "Boston"));
      Exception e = assertThrows(IllegalStateException.class, () -> judge.accepts("Which city?", gold, "boom"));
      assertTrue(e.getMessage().contains("HTTP 500"), e.getMessage());

      // configured from the spec: the catalog builds the judge, the key comes from the environment
      TaskRef ref = new TaskRef("searchqa", 1, 8, 1, 1, null, null, null, null,
          new ExperimentSpec.JudgeSpec(url, "spec-judge", "WHALE_TEST_UNSET_KEY_VARIABLE", 10, null));
      Task task = TaskCatalog.create(ref);
      TaskProblem p = new TaskProblem("x", "Which city?", "New York City");
      assertEquals(1.0, task.verify(p, "the Big Apple"));
      assertEquals(1.0, task.verify(p, "new york city."), "exact match needs no judge");
      JsonNode last = requests.get(requests.size() - 1);
      assertEquals("spec-judge", last.path("model").asText());
      assertEquals(null, auth.get(auth.size() - 1), "no key in the environment: no Authorization header");
    } finally {
      server.stop(0);
    }
  }

  @Test
  void theTaskAsksTheJudgeOnlyWhenExactMatchFails() {
    List<String> asked = new ArrayList<>();
    AnswerJudge judge = (q, gold, answer) -> {
      asked.add(answer);
      return answer.equals("Big Apple");
    };
    SearchQaTask task = SearchQaTask.withJudge(SearchQaTask.builtin(1, 8, 1, 1), judge);
    TaskProblem p = new TaskProblem("x", "Which city?", "New York");
    assertEquals(1.0, task.verify(p, "new york"));
    assertEquals(1.0, task.verify(p, "Big Apple"));
    assertEquals(0.0, task.verify(p, "Boston"));
    assertEquals(0.0, task.verify(p, "  "));
    assertEquals(List.of("Big Apple", "Boston"), asked);
  }
}
