package whale.workers;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import picocli.CommandLine.Option;

/** Where the Temporal service is: flags, else TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE, else local. */
public class Connection {
  @Option(names = "--address", description = "Temporal frontend host:port "
      + "(default: $TEMPORAL_ADDRESS or localhost:7233)")
  String address;

  @Option(names = "--namespace", description = "Temporal namespace "
      + "(default: $TEMPORAL_NAMESPACE or default)")
  String namespace;

  String address() {
    if (address != null) {
      return address;
    }
    String env = System.getenv("TEMPORAL_ADDRESS");
    return env == null || env.isBlank() ? "localhost:7233" : env;
  }

  String namespace() {
    if (namespace != null) {
      return namespace;
    }
    String env = System.getenv("TEMPORAL_NAMESPACE");
    return env == null || env.isBlank() ? "default" : env;
  }

  WorkflowServiceStubs service() {
    return WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(address()).build());
  }

  WorkflowClient client(WorkflowServiceStubs service) {
    return WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder().setNamespace(namespace()).build());
  }
}
