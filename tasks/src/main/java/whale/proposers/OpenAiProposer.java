package whale.proposers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import whale.harness.HarnessCandidate;

/**
 * The {@code openai} proposer: one request to an OpenAI-compatible {@code POST <baseUrl>/chat/completions}
 * (vLLM, Ollama, hosted services), prompted with the archive directory (summary, Pareto front, each
 * candidate's metadata, scores, source and a few traces, within a size budget). The reply must hold a
 * JSON object {@code {"candidates":[{"name","hypothesis","changes","axis","source"}...]}}; the first M
 * are taken. The API key, if any, comes from the worker's environment.
 */
public final class OpenAiProposer {
  static final int PROMPT_BUDGET_CHARS = 60_000;
  static final int TRACES_PER_CANDIDATE_CHARS = 3_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String baseUrl;
  private final String model;
  private final String apiKey;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
  private final Duration timeout;

  /** @param apiKey null or blank: no Authorization header */
  public OpenAiProposer(String baseUrl, String model, String apiKey, Duration timeout) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.model = model;
    this.apiKey = apiKey;
    this.timeout = timeout;
  }

  public List<HarnessCandidate> propose(Path archiveDir, int m, long seed) {
    try {
      ObjectNode body = JSON.createObjectNode();
      body.put("model", model);
      body.put("temperature", 0.8);
      body.put("seed", seed);
      ArrayNode messages = body.putArray("messages");
      messages.addObject().put("role", "system").put("content", systemPrompt());
      messages.addObject().put("role", "user").put("content", userPrompt(archiveDir, m));
      HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(baseUrl + "/chat/completions"))
          .timeout(timeout).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
      if (apiKey != null && !apiKey.isBlank()) {
        rb.header("Authorization", "Bearer " + apiKey);
      }
      HttpResponse<String> resp = http.send(rb.build(), HttpResponse.BodyHandlers.ofString());
      if (resp.statusCode() / 100 != 2) {
        throw new IllegalStateException("openai proposer: HTTP " + resp.statusCode() + ": "
            + cap(Secrets.redact(resp.body(), apiKey), 500));
      }
      // before parsing: a candidate's source, name or hypothesis is archived and sent to history
      String content = Secrets.redact(JSON.readTree(resp.body()).path("choices").path(0).path("message")
          .path("content").asText(""), apiKey);
      return parseCandidates(content, m);
    } catch (IOException e) {
      throw new UncheckedIOException("openai proposer: " + Secrets.redact(e.toString(), apiKey), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("openai proposer interrupted", e);
    }
  }

  static List<HarnessCandidate> parseCandidates(String content, int m) throws IOException {
    int a = content.indexOf('{');
    int b = content.lastIndexOf('}');
    if (a < 0 || b < a) {
      throw new IllegalStateException("openai proposer: no JSON object in the reply: " + cap(content, 300));
    }
    JsonNode arr = JSON.readTree(content.substring(a, b + 1)).path("candidates");
    List<HarnessCandidate> out = new ArrayList<>();
    for (JsonNode c : arr) {
      if (out.size() >= m) {
        break;
      }
      String source = c.path("source").asText("");
      if (source.isBlank()) {
        continue;
      }
      out.add(new HarnessCandidate(c.path("name").asText("openai-" + out.size()), c.path("hypothesis").asText(""),
          c.path("changes").asText(""), c.path("axis").asText("openai"), source));
    }
    if (out.isEmpty()) {
      throw new IllegalStateException("openai proposer: the reply holds no candidate: " + cap(content, 300));
    }
    return out;
  }

  static String systemPrompt() {
    return "You improve the harness of a small language model agent.\n" + HarnessApi.TEXT + """
        Goal: higher success, fewer turns. Reply with ONE JSON object:
        {"candidates":[{"name":"...","hypothesis":"...","changes":"...","axis":"...","source":"<full Java source, one public class>"}]}
        """;
  }

  static String userPrompt(Path archiveDir, int m) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append("Write ").append(m).append(" new candidates. The archive of this phase follows.\n\n");
    if (Files.exists(archiveDir.resolve("CONSTRAINTS.md"))) {
      appendFile(b, archiveDir.resolve("CONSTRAINTS.md"), "CONSTRAINTS.md", 2_000);
      appendFile(b, archiveDir.resolve("incoming.java"), "incoming.java", 12_000);
    }
    appendFile(b, archiveDir.resolve("pareto.json"), "pareto.json", 8_000);
    appendFile(b, archiveDir.resolve("summary.json"), "summary.json", 12_000);
    List<Path> dirs;
    try (Stream<Path> s = Files.list(archiveDir)) {
      dirs = s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
    }
    for (Path d : dirs) {
      if (b.length() > PROMPT_BUDGET_CHARS) {
        b.append("\n[older candidates omitted]\n");
        break;
      }
      String n = d.getFileName().toString();
      b.append("\n=== candidate ").append(n).append(" ===\n");
      appendFile(b, d.resolve("meta.json"), n + "/meta.json", 2_000);
      appendFile(b, d.resolve("scores.json"), n + "/scores.json", 2_000);
      appendFile(b, d.resolve("source.java"), n + "/source.java", 8_000);
      appendFile(b, d.resolve("traces.json"), n + "/traces.json (first part)", TRACES_PER_CANDIDATE_CHARS);
    }
    return b.toString();
  }

  private static void appendFile(StringBuilder b, Path f, String label, int max) throws IOException {
    if (Files.isRegularFile(f)) {
      b.append("--- ").append(label).append(" ---\n")
          .append(cap(Files.readString(f, StandardCharsets.UTF_8), max)).append('\n');
    }
  }

  static String cap(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max) + "...";
  }
}
