package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.temporal.testing.TestWorkflowEnvironment;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What every fast-tier test class shares: the scripted fake activities, registered on each test's
 * environment (each class registers its own {@code FastRuns.extension()}), and the check that no
 * activity was retried.
 */
abstract class FastTierTest {
  final Fakes fakes = new Fakes();

  @BeforeEach
  void start(TestWorkflowEnvironment env) {
    fakes.register(env);
  }

  @AfterEach
  void noActivityWasRetried() {
    assertEquals(List.of(), fakes.retried());
  }
}
