package whale.workflows;

import io.temporal.testing.WorkflowReplayer;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Replays a recorded history of a complete run (two rounds, signals none) against the current
 * workflow code: any change that would break running workflows fails here. Re-record it with
 * {@code WhaleWorkflowTest} (workers module, writes workers/target/histories/) only together with
 * a versioned workflow change.
 */
class WhaleWorkflowReplayTest {
  @Test
  void recordedFullRunReplays() throws Exception {
    try (InputStream in = getClass().getResourceAsStream("/histories/whale-full-run.json")) {
      String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      WorkflowReplayer.replayWorkflowExecution(json, WhaleWorkflowImpl.class);
    }
  }
}
