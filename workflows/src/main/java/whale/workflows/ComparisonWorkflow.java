package whale.workflows;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.util.List;
import whale.workflows.activities.ComparisonRun;

/**
 * Runs an experiment under several schedules and seeds as parallel {@link WhaleWorkflow} children
 * and renders the report (results table, plot of test mean@k against rollouts) into the artifact
 * store, linked from the workflow's current details. Task queue {@code whale-control}.
 */
@WorkflowInterface
public interface ComparisonWorkflow {
  @WorkflowMethod
  ComparisonResult run(ComparisonSpec spec);

  /** The runs finished so far. */
  @QueryMethod
  List<ComparisonRun> finished();
}
