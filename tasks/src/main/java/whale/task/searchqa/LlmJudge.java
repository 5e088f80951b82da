package whale.task.searchqa;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import whale.proposers.Secrets;

/**
 * An LLM judge on an OpenAI-compatible {@code POST <baseUrl>/chat/completions}: temperature 0, asked
 * whether the answer means the same as one of the gold answers, and accepting only a reply that
 * starts with "yes". Verdicts are cached per (question, answer), so the same rollout is judged once
 * per worker. An HTTP failure fails the verification (the activity is retried) rather than scoring 0.
 * The API key comes from the worker's environment, never from the spec.
 */
public final class LlmJudge implements AnswerJudge {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String baseUrl;
  private final String model;
  private final String apiKey;
  private final Duration timeout;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
  private final Map<String, Boolean> verdicts = new ConcurrentHashMap<>();

  /** @param apiKey null or blank: no Authorization header */
  public LlmJudge(String baseUrl, String model, String apiKey, Duration timeout) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.model = model;
    this.apiKey = apiKey;
    this.timeout = timeout;
  }

  @Override
  public boolean accepts(String question, List<String> goldAnswers, String answer) {
    return verdicts.computeIfAbsent(question + "\u0000" + answer, k -> ask(question, goldAnswers, answer));
  }

  private boolean ask(String question, List<String> goldAnswers, String answer) {
    try {
      ObjectNode body = JSON.createObjectNode();
      body.put("model", model);
      body.put("temperature", 0);
      body.put("max_tokens", 3);
      ArrayNode messages = body.putArray("messages");
      messages.addObject().put("role", "system").put("content", "You grade answers to questions. Reply with "
          + "exactly one word: yes if the predicted answer means the same as one of the gold answers, else no.");
      messages.addObject().put("role", "user").put("content", "Question: " + question + "\nGold answers: "
          + String.join(" | ", goldAnswers) + "\nPredicted answer: " + answer + "\nCorrect?");
      HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(baseUrl + "/chat/completions"))
          .timeout(timeout).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
      if (apiKey != null && !apiKey.isBlank()) {
        rb.header("Authorization", "Bearer " + apiKey);
      }
      HttpResponse<String> resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofString());
      if (resp.statusCode() / 100 != 2) {
        String b = Secrets.redact(resp.body(), apiKey);
        throw new IllegalStateException("LLM judge: HTTP " + resp.statusCode() + ": "
            + (b.length() > 300 ? b.substring(0, 300) : b));
      }
      String content = JSON.readTree(resp.body()).path("choices").path(0).path("message").path("content")
          .asText("");
      return content.trim().toLowerCase(Locale.ROOT).startsWith("yes");
    } catch (IOException e) {
      throw new UncheckedIOException("LLM judge: " + Secrets.redact(e.toString(), apiKey), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("LLM judge interrupted", e);
    }
  }
}
