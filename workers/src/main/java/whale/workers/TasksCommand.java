package whale.workers;

import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import whale.activities.TaskCatalog;
import whale.task.Split;
import whale.task.Task;
import whale.task.Tool;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecValidator;
import whale.workflows.activities.TaskRef;

/** Lists the built-in tasks: their splits at the default sizes, their tools and the formats they load. */
@Command(name = "tasks", mixinStandardHelpOptions = true,
    description = "List the tasks with their splits, tools and loadable dataset formats.")
public class TasksCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    ExperimentSpec.DataSpec d = ExperimentSpec.DataSpec.defaults();
    for (String name : TaskCatalog.names()) {
      Task t = TaskCatalog.create(new TaskRef(name, d.seed(), d.weightProblems(), d.harnessProblems(),
          d.testProblems()));
      System.out.printf("%-9s D_weight %d, D_harness %d, D_test %d (built-in, data seed %d)%n", name,
          t.split(Split.WEIGHT).size(), t.split(Split.HARNESS).size(), t.split(Split.TEST).size(),
          d.seed());
      System.out.println("          formats: " + String.join(", ",
          new TreeSet<>(SpecValidator.FORMATS.getOrDefault(name, java.util.Set.of("builtin")))));
      for (Tool tool : t.tools()) {
        System.out.println("          tool " + tool.name() + ": " + tool.description());
      }
      System.out.println("          e.g. " + t.split(Split.TEST).get(0).question().replace("\n", " | "));
    }
    return 0;
  }
}
