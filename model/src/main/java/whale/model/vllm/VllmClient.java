package whale.model.vllm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One vLLM server's OpenAI-compatible HTTP API, the parts whale uses: {@code /v1/models},
 * {@code /v1/completions} with token-id prompts (token ids and log-probabilities back), and the
 * runtime LoRA endpoints ({@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=True}). Every failure is a
 * {@link VllmException} that names the server's URL; whether it is worth retrying is its {@link
 * VllmException#transientFailure()}.
 */
public final class VllmClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI base;
  private final HttpClient http;
  private final Duration timeout;

  /** @param url the server's root, e.g. {@code http://127.0.0.1:8000} (a trailing /v1 is dropped) */
  public VllmClient(String url, Duration timeout) {
    String u = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    u = u.endsWith("/v1") ? u.substring(0, u.length() - 3) : u;
    this.base = URI.create(u);
    if (base.getScheme() == null || !base.getScheme().startsWith("http") || base.getHost() == null) {
      throw new IllegalArgumentException("not an http(s) URL of a vLLM server: " + url);
    }
    this.timeout = timeout;
    // HTTP/1.1: uvicorn speaks nothing else, and an h2c upgrade attempt only costs a round trip
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();
  }

  public String url() {
    return base.toString();
  }

  /** A model the server serves: the base (parent null) or a LoRA adapter on it. */
  public record ServedModel(String id, String root, String parent, int maxModelLen) {}

  /** What {@code /v1/models} lists. */
  public List<ServedModel> models() {
    JsonNode data = get("/v1/models").path("data");
    if (!data.isArray()) {
      throw malformed("/v1/models", "no data array");
    }
    List<ServedModel> out = new ArrayList<>();
    for (JsonNode m : data) {
      out.add(new ServedModel(m.path("id").asText(), m.path("root").asText(null),
          m.path("parent").isNull() ? null : m.path("parent").asText(null),
          m.path("max_model_len").asInt(0)));
    }
    return out;
  }

  /** Whether the server answers {@code /health} with 200 (false while it starts or when it is gone). */
  public boolean healthy() {
    try {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/health"))
          .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * One completion request.
   *
   * @param model the served model or adapter name
   * @param prompt the prompt's token ids, as whale tokenized it
   * @param topK 0 for none
   * @param stop stop strings (the returned text keeps the one that stopped it); empty: EOS only
   * @param logprobs whether to return each sampled token's log-probability
   */
  public record Call(String model, int[] prompt, int maxTokens, double temperature, int topK,
      long seed, List<String> stop, boolean logprobs) {}

  /**
   * A completion: the sampled token ids exactly as the server drew them (EOS included when it
   * stopped there), its text, and each token's log-probability when asked for.
   */
  public record Sample(String text, int[] tokenIds, double[] logprobs, String finishReason) {}

  public Sample complete(Call c) {
    ObjectNode body = JSON.createObjectNode();
    body.put("model", c.model());
    ArrayNode ids = body.putArray("prompt");
    for (int id : c.prompt()) {
      ids.add(id);
    }
    body.put("max_tokens", c.maxTokens());
    body.put("temperature", c.temperature());
    if (c.topK() > 0) {
      body.put("top_k", c.topK());
    }
    body.put("seed", c.seed());
    if (!c.stop().isEmpty()) {
      ArrayNode stop = body.putArray("stop");
      c.stop().forEach(stop::add);
      body.put("include_stop_str_in_output", true);
    }
    if (c.logprobs()) {
      body.put("logprobs", 0);
    }
    body.put("return_token_ids", true);
    JsonNode choice = post("/v1/completions", body).path("choices").path(0);
    JsonNode tokens = choice.path("token_ids");
    if (!choice.path("text").isTextual() || !tokens.isArray()) {
      throw malformed("/v1/completions", "no choices[0].text / token_ids");
    }
    int[] out = new int[tokens.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = tokens.get(i).asInt();
    }
    double[] lp = null;
    if (c.logprobs()) {
      JsonNode l = choice.path("logprobs").path("token_logprobs");
      if (!l.isArray() || l.size() != out.length) {
        throw malformed("/v1/completions", "token_logprobs do not match token_ids");
      }
      lp = new double[out.length];
      for (int i = 0; i < lp.length; i++) {
        lp[i] = l.get(i).asDouble();
      }
    }
    return new Sample(choice.path("text").asText(), out, lp, choice.path("finish_reason").asText(null));
  }

  /** Loads a PEFT adapter directory (a path the server can read) under {@code name}. */
  public void loadAdapter(String name, String path) {
    ObjectNode body = JSON.createObjectNode();
    body.put("lora_name", name);
    body.put("lora_path", path);
    post("/v1/load_lora_adapter", body);
  }

  public void unloadAdapter(String name) {
    ObjectNode body = JSON.createObjectNode();
    body.put("lora_name", name);
    post("/v1/unload_lora_adapter", body);
  }

  private JsonNode get(String path) {
    return send(path, HttpRequest.newBuilder(base.resolve(path)).timeout(timeout).GET().build());
  }

  private JsonNode post(String path, JsonNode body) {
    return send(path, HttpRequest.newBuilder(base.resolve(path)).timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build());
  }

  private JsonNode send(String path, HttpRequest request) {
    HttpResponse<String> r;
    try {
      r = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      throw new VllmException("no vLLM server answers at " + url() + " (" + path + ": connection "
          + "refused)", true, e);
    } catch (HttpTimeoutException e) {
      throw new VllmException("vLLM server " + url() + " did not answer " + path + " within "
          + timeout.toSeconds() + " s", true, e);
    } catch (IOException e) {
      throw new VllmException("vLLM server " + url() + ": " + path + " failed: " + e, true, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new VllmException("interrupted while waiting for " + url() + path, false, e);
    }
    String text = r.body() == null ? "" : r.body();
    if (r.statusCode() / 100 != 2) {
      // 5xx: the server is in trouble (restarting, overloaded); 4xx: the request is wrong
      throw new VllmException("vLLM server " + url() + " answered " + path + " with HTTP "
          + r.statusCode() + ": " + errorMessage(text), r.statusCode() >= 500 || r.statusCode() == 429,
          null, r.statusCode());
    }
    if (path.endsWith("_lora_adapter")) {
      return JSON.nullNode(); // these answer plain text ("Success: ...")
    }
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw malformed(path, "not JSON: " + abbreviate(text));
    }
  }

  private VllmException malformed(String path, String why) {
    return new VllmException("vLLM server " + url() + " answered " + path + " with malformed "
        + "JSON (" + why + ")", false, null);
  }

  private static String errorMessage(String body) {
    try {
      JsonNode n = JSON.readTree(body);
      JsonNode m = n.path("error").isObject() ? n.path("error").path("message") : n.path("message");
      if (m.isTextual()) {
        return m.asText();
      }
    } catch (IOException ignored) {
      // not JSON: show the text itself
    }
    return abbreviate(body);
  }

  private static String abbreviate(String s) {
    String t = s.strip();
    return t.length() > 300 ? t.substring(0, 300) + "..." : t;
  }
}
