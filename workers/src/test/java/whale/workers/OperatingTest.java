package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import whale.activities.WhaleMetrics;

/** Operating a worker: Prometheus metrics and Temporal's environment configuration. */
class OperatingTest {
  @TempDir Path dir;

  private static String scrape(int port) throws Exception {
    return HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void metricsEndpointServesWhaleAndTemporalSdkMetrics() throws Exception {
    try (MetricsServer metrics = new MetricsServer(0)) {
      WhaleMetrics.sandboxKills().increment();
      assertTrue(scrape(metrics.port()).contains("whale_sandbox_kills_total"));
      // the SDK reports its own metrics (polls, RPC latencies) through the same registry
      TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance(
          TestEnvironmentOptions.newBuilder().setMetricsScope(metrics.scope()).build());
      try {
        env.newWorker("metrics-probe");
        env.start();
        String body = "";
        for (int i = 0; i < 50 && !body.contains("temporal_"); i++) {
          Thread.sleep(200);
          body = scrape(metrics.port());
        }
        assertTrue(body.contains("temporal_"), "no Temporal SDK metric in:\n" + body);
      } finally {
        env.close();
      }
    }
  }

  @Test
  void connectionComesFromTheEnvironmentConfigProfileAndFlagsWin() throws Exception {
    Path toml = dir.resolve("temporal.toml");
    Files.writeString(toml, """
        [profile.default]
        address = "cluster.example:7233"
        namespace = "whale-prod"

        [profile.cloud]
        address = "ns.acct.tmprl.cloud:7233"
        namespace = "ns.acct"
        api_key = "secret-from-file"
        """);
    Connection c = new Connection();
    new CommandLine(c).parseArgs("--config-file", toml.toString());
    assertEquals("cluster.example:7233", c.address());
    assertEquals("whale-prod", c.namespace());

    Connection cloud = new Connection();
    new CommandLine(cloud).parseArgs("--config-file", toml.toString(), "--profile", "cloud");
    assertEquals("ns.acct.tmprl.cloud:7233", cloud.address());
    assertEquals("secret-from-file", cloud.profile().getApiKey());

    Connection flags = new Connection();
    new CommandLine(flags).parseArgs("--config-file", toml.toString(), "--address", "localhost:7999",
        "--namespace", "dev");
    assertEquals("localhost:7999", flags.address());
    assertEquals("dev", flags.namespace());
  }
}
