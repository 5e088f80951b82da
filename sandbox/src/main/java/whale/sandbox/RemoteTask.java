package whale.sandbox;

import java.util.ArrayList;
import java.util.List;
import whale.proto.sandbox.v1.ToolCallRequest;
import whale.proto.sandbox.v1.ToolCallResponse;
import whale.proto.sandbox.v1.ToolServiceGrpc;
import whale.proto.sandbox.v1.ToolSpec;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * The task as a sandbox sees it: only its tools, each a call to the worker's ToolService. No splits,
 * no reference answers; {@link #verify} is 0 (the worker verifies the answers it gets back).
 */
final class RemoteTask implements Task {
  private final List<Tool> tools = new ArrayList<>();

  RemoteTask(ToolServiceGrpc.ToolServiceBlockingStub stub, String session, List<ToolSpec> specs) {
    for (ToolSpec s : specs) {
      tools.add(new Tool() {
        @Override
        public String name() {
          return s.getName();
        }

        @Override
        public String description() {
          return s.getDescription();
        }

        @Override
        public String apply(String input) {
          ToolCallResponse r = stub.call(ToolCallRequest.newBuilder().setSession(session)
              .setName(s.getName()).setInput(input).build());
          if (!r.getError().isEmpty()) {
            throw new IllegalArgumentException(r.getError());
          }
          return r.getOutput();
        }
      });
    }
  }

  @Override
  public String name() {
    return "remote";
  }

  @Override
  public List<TaskProblem> split(Split split) {
    throw new UnsupportedOperationException("a sandbox holds no problems");
  }

  @Override
  public double verify(TaskProblem problem, String answer) {
    return 0.0;
  }

  @Override
  public List<Tool> tools() {
    return tools;
  }

  @Override
  public List<String> pretrainingCorpus(long seed, int documents) {
    throw new UnsupportedOperationException();
  }
}
