package whale.workflows.activities;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.List;
import whale.workflows.Spelled;
import java.util.Map;

/**
 * Where an episode's model calls are sampled ({@code rollouts} in the spec): in the worker's own
 * JVM ({@code local}, the default) or on vLLM servers ({@code vllm}), for RSFT sampling, harness
 * scoring and test evaluation alike. Training stays in the worker either way.
 *
 * @param servers the vLLM servers' URLs; empty: the servers the worker runs or was given
 *     ({@code whale worker --vllm-serve} / {@code --vllm-servers})
 * @param timeoutSeconds how long one request may take, and how long a failing server is retried
 * @param maxConcurrentRequests requests in flight at once per worker, over all servers
 * @param probeTolerance the largest difference, in nats, allowed between a server's
 *     log-probability of a probe token and whale's own before a checkpoint is sampled there
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Rollouts(String backend, List<String> servers, Integer timeoutSeconds,
    Integer maxConcurrentRequests, Double probeTolerance,
    @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
  /** float32 on both sides agreed within 3e-5 nats on SmolLM2 (see VllmRolloutsTest). */
  public static final double DEFAULT_PROBE_TOLERANCE = 0.01;

  /**
   * The backends. The record keeps {@code backend} as written (a string), as the spec's other
   * closed sets: a bad spelling must fail the run naming the field ({@code SpecValidator}), not
   * fail Temporal's decoding of the workflow input.
   */
  public enum Backend implements Spelled {
    LOCAL("local"), VLLM("vllm");

    private final String json;

    Backend(String json) {
      this.json = json;
    }

    @JsonValue
    @Override
    public String json() {
      return json;
    }

    @Override
    public String toString() {
      return json;
    }

    @JsonCreator
    public static Backend of(String json) {
      return Spelled.parse(Backend.class, "rollouts.backend", json);
    }
  }

  public Rollouts {
    backend = backend == null ? Backend.LOCAL.json() : backend;
    servers = servers == null ? List.of() : List.copyOf(servers);
    unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
  }

  /** {@link #backend} as the closed set it is; null for a spelling the validator rejects. */
  public Backend backendKind() {
    return Spelled.find(Backend.class, backend).orElse(null);
  }

  public boolean vllm() {
    return backendKind() == Backend.VLLM;
  }

  public int timeoutOrDefault() {
    return timeoutSeconds == null ? 300 : timeoutSeconds;
  }

  public int concurrencyOrDefault() {
    return maxConcurrentRequests == null ? 16 : maxConcurrentRequests;
  }

  public double toleranceOrDefault() {
    return probeTolerance == null ? DEFAULT_PROBE_TOLERANCE : probeTolerance;
  }
}
