package whale.workers;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import whale.workflows.WhaleStatus;

@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show where a run stands (the workflow's status query).")
public class StatusCommand implements Callable<Integer> {
  @Mixin Connection connection;

  @Parameters(index = "0", description = "Workflow id")
  String workflowId;

  @Override
  public Integer call() {
    var service = connection.service();
    WhaleStatus s = connection.client(service).newUntypedWorkflowStub(workflowId)
        .query("status", WhaleStatus.class);
    System.out.println(Report.status(s));
    service.shutdown();
    return 0;
  }
}
