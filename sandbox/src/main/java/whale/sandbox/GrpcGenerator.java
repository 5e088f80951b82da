package whale.sandbox;

import java.util.ArrayList;
import java.util.List;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.proto.model.v1.GenerateRequest;
import whale.proto.model.v1.GenerateResponse;
import whale.proto.model.v1.ModelServiceGrpc;
import whale.proto.model.v1.Prompt;

/** The model as a sandbox sees it: one ModelService.Generate call per batch. */
final class GrpcGenerator implements Generator {
  private final ModelServiceGrpc.ModelServiceBlockingStub stub;
  private final String session;

  private final whale.chat.ChatTemplate template;

  GrpcGenerator(ModelServiceGrpc.ModelServiceBlockingStub stub, String session,
      whale.chat.ChatTemplate template) {
    this.stub = stub;
    this.session = session;
    this.template = template;
  }

  /** The worker's model's template, sent with the episodes: the sandbox renders chats itself. */
  @Override
  public whale.chat.ChatTemplate chatTemplate() {
    return template;
  }

  @Override
  public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
    // params (temperature, top-k) stay here: the worker samples with its session's
    GenerateRequest.Builder b = GenerateRequest.newBuilder().setSession(session);
    for (GenerationRequest r : requests) {
      Prompt.Builder p = Prompt.newBuilder().setText(r.prompt()).setSeed(r.seed())
          .setMaxNewTokens(r.maxNewTokens()).setChat(r.chat());
      if (r.temperature() != null) {
        p.setTemperature(r.temperature());
      }
      b.addPrompts(p);
    }
    GenerateResponse resp = stub.generate(b.build());
    List<Completion> out = new ArrayList<>(resp.getCompletionsCount());
    for (whale.proto.model.v1.Completion c : resp.getCompletionsList()) {
      out.add(new Completion(c.getText(), c.getPromptTokens(), c.getCompletionTokens(),
          c.getError().isEmpty() ? null : c.getError()));
    }
    return out;
  }
}
