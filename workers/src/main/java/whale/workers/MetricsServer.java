package whale.workers;

import com.sun.net.httpserver.HttpServer;
import com.uber.m3.tally.RootScopeBuilder;
import com.uber.m3.tally.Scope;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.temporal.common.reporter.MicrometerClientStatsReporter;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Prometheus metrics of a worker on {@code http://host:port/metrics}: the Temporal SDK's (through its
 * Micrometer reporter) and whale's own (steps, rollouts, mean@k, failed episodes, sandbox kills).
 */
public final class MetricsServer implements AutoCloseable {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Scope scope;
  private final HttpServer http;

  public MetricsServer(int port) throws IOException {
    Metrics.addRegistry(registry); // whale's meters live on the global registry
    scope = new RootScopeBuilder()
        .reporter(new MicrometerClientStatsReporter(registry))
        .reportEvery(com.uber.m3.util.Duration.ofSeconds(1));
    http = HttpServer.create(new InetSocketAddress(port), 0);
    http.createContext("/metrics", exchange -> {
      byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    http.start();
  }

  /** The scope to give the service stubs, so the SDK reports into this registry. */
  public Scope scope() {
    return scope;
  }

  public int port() {
    return http.getAddress().getPort();
  }

  @Override
  public void close() {
    http.stop(0);
    try {
      scope.close();
    } catch (com.uber.m3.tally.ScopeCloseException e) {
      // closing flushes the last report; nothing left to do if it fails
    }
    Metrics.removeRegistry(registry);
    registry.close();
  }
}
