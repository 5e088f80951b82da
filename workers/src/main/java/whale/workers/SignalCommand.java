package whale.workers;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

@Command(name = "signal", mixinStandardHelpOptions = true,
    description = "Steer a run: forcePhaseSwitch, pause, resume or stop.")
public class SignalCommand implements Callable<Integer> {
  static final List<String> SIGNALS = List.of("forcePhaseSwitch", "pause", "resume", "stop");

  @Mixin Connection connection;

  @Parameters(index = "0", description = "Workflow id")
  String workflowId;

  @Parameters(index = "1", description = "One of: forcePhaseSwitch, pause, resume, stop")
  String name;

  @Override
  public Integer call() {
    if (!SIGNALS.contains(name)) {
      throw new IllegalArgumentException("unknown signal '" + name + "'; valid: " + SIGNALS);
    }
    var service = connection.service();
    connection.client(service).newUntypedWorkflowStub(workflowId).signal(name);
    System.out.println("sent " + name + " to " + workflowId);
    service.shutdown();
    return 0;
  }
}
