package whale.sandbox;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import whale.harness.EpisodeRunner;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.proto.model.v1.GenerateRequest;
import whale.proto.model.v1.GenerateResponse;
import whale.proto.model.v1.ModelServiceGrpc;
import whale.proto.model.v1.Prompt;
import whale.proto.sandbox.v1.ToolCallRequest;
import whale.proto.sandbox.v1.ToolCallResponse;
import whale.proto.sandbox.v1.ToolServiceGrpc;
import whale.task.Task;
import whale.task.Tool;

/**
 * The worker's side of the sandbox boundary: a gRPC server on the loopback interface serving
 * ModelService (batched through each run's {@link BatchGroup}) and ToolService to sandbox processes.
 * Every call names a shard session; an unknown or closed session is refused.
 */
public final class SandboxHost implements AutoCloseable {
  private final Server server;
  private final Map<String, Shard> shards = new ConcurrentHashMap<>();

  /** One sandbox's part of an episode run, as the worker tracks it. */
  static final class Shard {
    final String id;
    final BatchGroup group;
    final Task task;
    final long maxPrompts;
    // the model's caps (whale.model.ModelLimits), enforced here too: the sandbox is not trusted
    final int maxPromptChars;
    final int maxNewTokens;
    // the spec's bound on a chat turn's own temperature (EpisodeRunner.Config#temperatureBound)
    final double maxTemperature;
    final AtomicLong prompts = new AtomicLong();
    final AtomicInteger inFlight = new AtomicInteger();
    volatile long lastActivityNanos = System.nanoTime();
    volatile String violation;

    Shard(String id, BatchGroup group, Task task, long maxPrompts, int maxPromptChars,
        int maxNewTokens, double maxTemperature) {
      this.id = id;
      this.maxTemperature = maxTemperature;
      this.group = group;
      this.task = task;
      this.maxPrompts = maxPrompts;
      this.maxPromptChars = maxPromptChars;
      this.maxNewTokens = maxNewTokens;
    }

    void touch() {
      lastActivityNanos = System.nanoTime();
    }
  }

  public SandboxHost() {
    try {
      server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
          .addService(new ModelImpl()).addService(new ToolImpl())
          .maxInboundMessageSize(SandboxMain.MAX_MESSAGE).build().start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the sandbox host server", e);
    }
  }

  public String address() {
    return "127.0.0.1:" + server.getPort();
  }

  Shard open(String id, BatchGroup group, Task task, long maxPrompts, int maxPromptChars,
      int maxNewTokens, double maxTemperature) {
    Shard s = new Shard(id, group, task, maxPrompts, maxPromptChars, maxNewTokens, maxTemperature);
    shards.put(id, s);
    return s;
  }

  void close(Shard s) {
    shards.remove(s.id);
  }

  @Override
  public void close() {
    server.shutdownNow();
  }

  private final class ModelImpl extends ModelServiceGrpc.ModelServiceImplBase {
    @Override
    public void generate(GenerateRequest req, StreamObserver<GenerateResponse> obs) {
      Shard s = shards.get(req.getSession());
      if (s == null) {
        obs.onError(Status.NOT_FOUND.withDescription("no such session").asRuntimeException());
        return;
      }
      s.touch();
      if (s.prompts.addAndGet(req.getPromptsCount()) > s.maxPrompts) {
        s.violation = "more model calls than the turn budget allows (" + s.maxPrompts + " for the shard)";
        obs.onError(Status.RESOURCE_EXHAUSTED.withDescription(s.violation).asRuntimeException());
        return;
      }
      List<GenerationRequest> reqs = new ArrayList<>(req.getPromptsCount());
      for (Prompt p : req.getPromptsList()) {
        if (p.getText().length() > s.maxPromptChars) {
          obs.onError(Status.INVALID_ARGUMENT.withDescription("prompt too long").asRuntimeException());
          return;
        }
        int max = p.getMaxNewTokens() > 0 ? p.getMaxNewTokens() : req.getParams().getMaxNewTokens();
        Double temperature = null;
        if (p.hasTemperature()) {
          if (!(p.getTemperature() >= 0 && p.getTemperature() < Double.POSITIVE_INFINITY)) {
            obs.onError(Status.INVALID_ARGUMENT.withDescription("bad temperature").asRuntimeException());
            return;
          }
          temperature = Math.min(p.getTemperature(), s.maxTemperature);
        }
        reqs.add(new GenerationRequest(p.getText(), p.getSeed(), Math.max(1, Math.min(max, s.maxNewTokens)),
            p.getChat(), temperature));
      }
      s.inFlight.incrementAndGet();
      List<Completion> out;
      try {
        out = s.group.generate(reqs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        obs.onError(Status.CANCELLED.asRuntimeException());
        return;
      } catch (RuntimeException e) {
        obs.onError(Status.UNAVAILABLE.withDescription(String.valueOf(e.getMessage())).asRuntimeException());
        return;
      } finally {
        s.inFlight.decrementAndGet();
        s.touch();
      }
      GenerateResponse.Builder b = GenerateResponse.newBuilder();
      for (Completion c : out) {
        b.addCompletions(whale.proto.model.v1.Completion.newBuilder().setText(c.text() == null ? "" : c.text())
            .setPromptTokens(c.promptTokens()).setCompletionTokens(c.completionTokens())
            .setError(c.error() == null ? "" : c.error()));
      }
      obs.onNext(b.build());
      obs.onCompleted();
    }
  }

  private final class ToolImpl extends ToolServiceGrpc.ToolServiceImplBase {
    @Override
    public void call(ToolCallRequest req, StreamObserver<ToolCallResponse> obs) {
      Shard s = shards.get(req.getSession());
      if (s == null) {
        obs.onError(Status.NOT_FOUND.withDescription("no such session").asRuntimeException());
        return;
      }
      s.touch();
      Tool t = s.task.tool(req.getName());
      ToolCallResponse.Builder b = ToolCallResponse.newBuilder();
      if (req.getInput().length() > EpisodeRunner.MAX_TOOL_INPUT_CHARS) {
        // the sandbox's runner caps inputs already: only a subverted sandbox gets here
        b.setError(EpisodeRunner.toolInputTooLong(req.getName(), req.getInput().length()));
      } else if (t == null) {
        b.setError("unknown tool '" + req.getName() + "'; available: "
            + s.task.tools().stream().map(Tool::name).toList());
      } else {
        try {
          b.setOutput(String.valueOf(t.apply(req.getInput())));
        } catch (RuntimeException e) {
          b.setError(String.valueOf(e.getMessage()));
        }
      }
      obs.onNext(b.build());
      obs.onCompleted();
    }
  }
}
