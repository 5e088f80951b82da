package whale.workers;

import io.temporal.testing.TestWorkflowExtension;
import whale.workflows.WhaleSearchAttributes;

/** The Java test server as whale's workflow tests use it: whale's search attributes registered. */
final class WhaleTestServer {
  private WhaleTestServer() {}

  /** Not started: each test registers its workers (and their runtime) first, then starts it. */
  static TestWorkflowExtension extension() {
    TestWorkflowExtension.Builder b = TestWorkflowExtension.newBuilder();
    WhaleSearchAttributes.ALL.forEach(b::registerSearchAttribute);
    return b.setDoNotStart(true).build();
  }
}
