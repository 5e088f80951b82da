package whale.workers;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecJson;
import whale.workflows.WhaleWorkflow;

@Command(name = "start", mixinStandardHelpOptions = true,
    description = "Validate a spec file and start a WhaleWorkflow run.")
public class StartCommand implements Callable<Integer> {
  @Mixin Connection connection;

  @Parameters(index = "0", description = "Experiment spec (JSON), e.g. examples/math.json")
  Path specFile;

  @Option(names = "--id", description = "Workflow id (default: whale-<name>-<time>)")
  String id;

  @Option(names = "--wait", description = "Wait for the result and print it.")
  boolean await;

  @Override
  public Integer call() throws Exception {
    ExperimentSpec spec = SpecJson.parse(Files.readString(specFile));
    DataFiles.check(spec, false); // the workers may read files this machine cannot see
    var service = connection.service();
    WorkflowClient client = connection.client(service);
    String wid = id != null ? id : "whale-" + spec.name() + "-" + System.currentTimeMillis();
    WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
        .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(wid).build());
    WorkflowClient.start(wf::run, spec, null);
    System.out.println("started " + wid);
    if (await) {
      var result = client.newUntypedWorkflowStub(wid).getResult(whale.workflows.WhaleResult.class);
      System.out.println(Report.result(spec, result));
    }
    service.shutdown();
    return 0;
  }
}
