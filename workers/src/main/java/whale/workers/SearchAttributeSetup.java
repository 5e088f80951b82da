package whale.workers;

import io.temporal.api.operatorservice.v1.AddSearchAttributesRequest;
import io.temporal.api.operatorservice.v1.ListSearchAttributesRequest;
import io.temporal.serviceclient.OperatorServiceStubs;
import io.temporal.serviceclient.OperatorServiceStubsOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.HashMap;
import java.util.Map;
import whale.workflows.WhaleSearchAttributes;

/**
 * Registers whale's search attributes on a real server when they are missing, so a run never fails
 * its first workflow task because the namespace lacks them.
 */
public final class SearchAttributeSetup {
  private SearchAttributeSetup() {}

  /** Returns the names it added (empty when all were present). */
  public static Map<String, String> ensure(WorkflowServiceStubs service, String namespace) {
    OperatorServiceStubs operator = OperatorServiceStubs.newServiceStubs(
        OperatorServiceStubsOptions.newBuilder()
            .setChannel(service.getRawChannel())
            .validateAndBuildWithDefaults());
    try {
      var existing = operator.blockingStub().listSearchAttributes(
          ListSearchAttributesRequest.newBuilder().setNamespace(namespace).build())
          .getCustomAttributesMap();
      var missing = new HashMap<String, io.temporal.api.enums.v1.IndexedValueType>();
      WhaleSearchAttributes.ALL.forEach((k, v) -> {
        if (!existing.containsKey(k)) {
          missing.put(k, v);
        }
      });
      if (!missing.isEmpty()) {
        operator.blockingStub().addSearchAttributes(AddSearchAttributesRequest.newBuilder()
            .setNamespace(namespace).putAllSearchAttributes(missing).build());
      }
      Map<String, String> added = new HashMap<>();
      missing.forEach((k, v) -> added.put(k, v.name()));
      return added;
    } finally {
      operator.shutdown();
    }
  }
}
