package whale.workers;

import com.uber.m3.tally.Scope;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.envconfig.ClientConfigProfile;
import io.temporal.envconfig.LoadClientConfigProfileOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Where the Temporal service is and how to reach it, through Temporal's standard environment
 * configuration: a TOML profile (`--config-file`, `--profile`, or $TEMPORAL_CONFIG_FILE /
 * $TEMPORAL_PROFILE) and the $TEMPORAL_ADDRESS, $TEMPORAL_NAMESPACE, $TEMPORAL_API_KEY and
 * $TEMPORAL_TLS_* variables, so one worker binary runs against a dev server, a self-hosted cluster
 * or Temporal Cloud. Flags win; with nothing set, localhost:7233 and namespace default.
 */
public class Connection {
  @Option(names = "--address", description = "Temporal frontend host:port "
      + "(default: the profile, $TEMPORAL_ADDRESS, or localhost:7233)")
  String address;

  @Option(names = "--namespace", description = "Temporal namespace "
      + "(default: the profile, $TEMPORAL_NAMESPACE, or default)")
  String namespace;

  @Option(names = "--config-file", description = "Temporal client config TOML file "
      + "(default: $TEMPORAL_CONFIG_FILE or the CLI's default location)")
  Path configFile;

  @Option(names = "--profile", description = "Profile in the config file (default: $TEMPORAL_PROFILE "
      + "or default)")
  String profileName;

  private ClientConfigProfile profile;

  ClientConfigProfile profile() {
    if (profile == null) {
      LoadClientConfigProfileOptions.Builder o = LoadClientConfigProfileOptions.newBuilder();
      if (configFile != null) {
        o.setConfigFilePath(configFile.toString());
      }
      if (profileName != null) {
        o.setConfigFileProfile(profileName);
      }
      ClientConfigProfile loaded;
      try {
        loaded = ClientConfigProfile.load(o.build());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read Temporal client config: " + e.getMessage(), e);
      }
      ClientConfigProfile.Builder b = loaded.toBuilder();
      if (address != null) {
        b.setAddress(address);
      } else if (blank(loaded.getAddress())) {
        b.setAddress("localhost:7233");
      }
      if (namespace != null) {
        b.setNamespace(namespace);
      } else if (blank(loaded.getNamespace())) {
        b.setNamespace("default");
      }
      profile = b.build();
    }
    return profile;
  }

  String address() {
    return profile().getAddress();
  }

  String namespace() {
    return profile().getNamespace();
  }

  WorkflowServiceStubs service() {
    return service(null);
  }

  /** Service stubs from the profile; {@code metrics} (may be null) receives the SDK's metrics. */
  WorkflowServiceStubs service(Scope metrics) {
    WorkflowServiceStubsOptions.Builder o =
        WorkflowServiceStubsOptions.newBuilder(profile().toWorkflowServiceStubsOptions());
    if (metrics != null) {
      o.setMetricsScope(metrics);
    }
    return WorkflowServiceStubs.newServiceStubs(o.build());
  }

  WorkflowClient client(WorkflowServiceStubs service) {
    return WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder(profile().toWorkflowClientOptions())
            .setNamespace(namespace()).build());
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
