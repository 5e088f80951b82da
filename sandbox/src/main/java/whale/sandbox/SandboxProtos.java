package whale.sandbox;

import java.util.ArrayList;
import java.util.List;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeStatus;
import whale.harness.ModelCall;
import whale.harness.ToolCall;
import whale.proto.sandbox.v1.EpisodeReply;
import whale.proto.sandbox.v1.ModelCallTrace;
import whale.proto.sandbox.v1.ToolCallTrace;

/** Episode results to and from their wire form ({@code sandbox_service.proto}). */
public final class SandboxProtos {
  private SandboxProtos() {}

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  private static String json(whale.chat.ChatCall c) {
    try {
      return JSON.writeValueAsString(c);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("a chat call that does not serialise: " + e.getOriginalMessage(), e);
    }
  }

  /** A sandbox's chat record; the sandbox is not trusted, so a bad one is refused by name. */
  private static whale.chat.ChatCall chat(String json) {
    try {
      return JSON.readValue(json, whale.chat.ChatCall.class);
    } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
      throw new IllegalArgumentException("sandbox sent a malformed chat record: " + e.getMessage(), e);
    }
  }

  public static EpisodeReply toReply(int index, EpisodeResult r) {
    EpisodeReply.Builder b = EpisodeReply.newBuilder().setIndex(index).setProblemId(r.problemId())
        .setSampleIndex(r.sampleIndex()).setTurns(r.turns()).setStatus(r.status().name());
    if (r.answer() != null) {
      b.setHasAnswer(true).setAnswer(r.answer());
    }
    if (r.error() != null) {
      b.setError(r.error());
    }
    for (ModelCall c : r.modelCalls()) {
      b.addModelCalls(ModelCallTrace.newBuilder().setCallIndex(c.callIndex()).setPrompt(c.prompt())
          .setMaxNewTokens(c.maxNewTokens()).setSeed(c.seed()).setCompletion(c.completion())
          .setPromptTokens(c.promptTokens()).setCompletionTokens(c.completionTokens())
          .setChatJson(c.chat() == null ? "" : json(c.chat())));
    }
    for (ToolCall t : r.toolCalls()) {
      b.addToolCalls(ToolCallTrace.newBuilder().setName(t.name()).setInput(t.input()).setOutput(t.output()));
    }
    b.addAllNotes(r.notes());
    return b.build();
  }

  /** The episode as the sandbox reported it; reward 0 (the worker's verifier sets it). */
  public static EpisodeResult fromReply(EpisodeReply r) {
    List<ModelCall> calls = new ArrayList<>(r.getModelCallsCount());
    for (ModelCallTrace c : r.getModelCallsList()) {
      calls.add(new ModelCall(c.getCallIndex(), c.getPrompt(), c.getMaxNewTokens(), c.getSeed(),
          c.getCompletion(), c.getPromptTokens(), c.getCompletionTokens(),
          c.getChatJson().isEmpty() ? null : chat(c.getChatJson())));
    }
    List<ToolCall> tools = new ArrayList<>(r.getToolCallsCount());
    for (ToolCallTrace t : r.getToolCallsList()) {
      tools.add(new ToolCall(t.getName(), t.getInput(), t.getOutput()));
    }
    EpisodeStatus status;
    try {
      status = EpisodeStatus.valueOf(r.getStatus());
    } catch (IllegalArgumentException e) {
      status = EpisodeStatus.ERROR;
    }
    return new EpisodeResult(r.getProblemId(), r.getSampleIndex(), r.getHasAnswer() ? r.getAnswer() : null,
        0.0, r.getTurns(), calls, tools, r.getNotesList(), status, r.getError().isEmpty() ? null : r.getError());
  }
}
