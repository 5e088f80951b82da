package whale.workers;

import io.temporal.client.WorkflowClient;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import whale.activities.ActivityRuntime;
import whale.activities.ReportActivitiesImpl;
import whale.workflows.ComparisonResult;
import whale.workflows.activities.ComparisonReport;
import whale.workflows.activities.ReportRequest;

/** Regenerates a finished comparison's report from its workflow result. */
@Command(name = "report", mixinStandardHelpOptions = true,
    description = "Regenerate the report (table, PNG plot, HTML page) of a finished comparison.")
public class ReportCommand implements Callable<Integer> {
  @Mixin Connection connection;

  @Parameters(index = "0", description = "Workflow id of a finished ComparisonWorkflow")
  String workflowId;

  @Mixin Artifacts artifacts = new Artifacts();

  @Override
  public Integer call() throws Exception {
    var service = connection.service();
    try {
      WorkflowClient client = connection.client(service);
      ComparisonResult result = client.newUntypedWorkflowStub(workflowId)
          .getResult(ComparisonResult.class);
      ComparisonReport report = new ReportActivitiesImpl(ActivityRuntime.open(artifacts.open()))
          .render(new ReportRequest(workflowId.replaceAll("[^A-Za-z0-9._-]", "_"), result.name(), result.k(), result.runs()));
      System.out.println(Report.comparison(new ComparisonResult(result.name(), result.k(),
          result.runs(), report)));
      return 0;
    } finally {
      service.shutdown();
    }
  }
}
