package whale.sandbox;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import whale.harness.CompiledHarness;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.HarnessCompiler;
import whale.model.SamplingParams;
import whale.proto.model.v1.ModelServiceGrpc;
import whale.proto.sandbox.v1.CheckReply;
import whale.proto.sandbox.v1.CheckRequest;
import whale.proto.sandbox.v1.EpisodeReply;
import whale.proto.sandbox.v1.Limits;
import whale.proto.sandbox.v1.PingReply;
import whale.proto.sandbox.v1.PingRequest;
import whale.proto.sandbox.v1.ProblemSpec;
import whale.proto.sandbox.v1.RunEpisodesRequest;
import whale.proto.sandbox.v1.SandboxServiceGrpc;
import whale.proto.sandbox.v1.ToolServiceGrpc;
import whale.task.TaskProblem;

/**
 * A sandbox process: {@code java -Xmx256m -cp <classpath> whale.sandbox.SandboxMain <port>}. Serves
 * SandboxService on the loopback interface (port 0: any free port), prints
 * {@code WHALE_SANDBOX_PORT=<port>} as its first line, and halts when its parent process exits. It
 * compiles untrusted harness source with {@link HarnessCompiler} (the Check RPC: the worker never
 * compiles it itself) and runs its episodes with {@link EpisodeRunner}, reaching the model and the
 * tools only through the worker's gRPC services. After a run it reports harness work that outlived
 * the episodes ({@link #leftoverHarnessWork}), and the worker then does not reuse it.
 */
public final class SandboxMain {
  public static final String PORT_LINE = "WHALE_SANDBOX_PORT=";
  static final int MAX_MESSAGE = 64 << 20;

  private SandboxMain() {}

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    ProcessHandle.current().parent().ifPresent(p -> p.onExit().thenRun(() -> Runtime.getRuntime().halt(3)));
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
        .addService(new Service()).maxInboundMessageSize(MAX_MESSAGE).build().start();
    System.out.println(PORT_LINE + server.getPort());
    System.out.flush();
    server.awaitTermination();
  }

  /** How long threads that ran harness code get to end after the last episode of a run. */
  static final long LEFTOVER_GRACE_MILLIS = 300;

  /**
   * What harness work is still going on after every episode of a run has ended, or null: a live
   * episode thread, a busy common-pool worker (parallel streams) or any thread with harness code on
   * its stack (the harness classes' loaders are named "whale-harness"), e.g. the Finalizer. Waits up
   * to {@code graceMillis} for such work to end.
   */
  static String leftoverHarnessWork(long graceMillis) {
    long deadline = System.nanoTime() + graceMillis * 1_000_000;
    while (true) {
      String found = null;
      for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
        Thread t = e.getKey();
        if (t == Thread.currentThread() || !t.isAlive()) {
          continue;
        }
        String why = null;
        if (t.getName().startsWith("whale-episode-")) {
          why = "episode thread still alive";
        } else if (t instanceof java.util.concurrent.ForkJoinWorkerThread
            && (t.getState() == Thread.State.RUNNABLE || t.getState() == Thread.State.BLOCKED)) {
          why = "common-pool worker still busy";
        } else {
          for (StackTraceElement f : e.getValue()) {
            if ("whale-harness".equals(f.getClassLoaderName())) {
              why = "running harness code (" + f + ")";
              break;
            }
          }
        }
        if (why != null) {
          found = "thread " + t.getName() + ": " + why;
          break;
        }
      }
      if (found == null || System.nanoTime() > deadline) {
        return found == null ? null : "harness work outlived its episodes: " + found;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return found;
      }
    }
  }

  static final class Service extends SandboxServiceGrpc.SandboxServiceImplBase {
    private final HarnessCompiler compiler = new HarnessCompiler();
    private final Map<String, HarnessCompiler.Result> compiled = java.util.Collections.synchronizedMap(
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, HarnessCompiler.Result> e) {
            return size() > 32;
          }
        });
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    @Override
    public void ping(PingRequest request, StreamObserver<PingReply> obs) {
      obs.onNext(PingReply.newBuilder().setPid(ProcessHandle.current().pid()).build());
      obs.onCompleted();
    }

    @Override
    public void check(CheckRequest req, StreamObserver<CheckReply> obs) {
      try {
        HarnessCompiler.Result r = compile(req.getHarnessSource());
        obs.onNext(CheckReply.newBuilder().setOk(r.ok()).setErrors(r.ok() ? "" : r.errorText()).build());
        obs.onCompleted();
      } catch (Throwable t) {
        obs.onError(Status.INTERNAL.withDescription("sandbox check failed: " + t).asRuntimeException());
      }
    }

    private HarnessCompiler.Result compile(String source) {
      HarnessCompiler.Result r = compiled.get(source);
      if (r == null) {
        r = compiler.tryCompile(source);
        compiled.put(source, r);
      }
      return r;
    }

    /** The worker's chat template: compiled once per distinct source, like harnesses. */
    private whale.chat.ChatTemplate template(RunEpisodesRequest req) {
      if (!req.hasChatTemplate()) {
        return whale.chat.ChatTemplate.builtin();
      }
      var t = req.getChatTemplate();
      if (t.getSource().isEmpty()) {
        return whale.chat.ChatTemplate.missing(t.getOrigin());
      }
      return templates.computeIfAbsent(t.getSource() + '\u0000' + t.getOrigin() + '\u0000' + t.getBosToken()
          + '\u0000' + t.getEosToken(), k -> new whale.chat.ChatTemplate(t.getSource(), t.getOrigin(),
              t.getBosToken(), t.getEosToken()));
    }

    private final java.util.Map<String, whale.chat.ChatTemplate> templates =
        new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void runEpisodes(RunEpisodesRequest req, StreamObserver<EpisodeReply> obs) {
      try {
        HarnessCompiler.Result r = compile(req.getHarnessSource());
        if (!r.ok()) {
          obs.onNext(EpisodeReply.newBuilder().setCompileError(r.errorText()).build());
          obs.onCompleted();
          return;
        }
        CompiledHarness harness = r.harness();
        ManagedChannel ch = channels.computeIfAbsent(req.getCallbackAddress(),
            a -> NettyChannelBuilder.forTarget(a).usePlaintext().maxInboundMessageSize(MAX_MESSAGE).build());
        Limits l = req.getLimits();
        EpisodeRunner.Config d = EpisodeRunner.Config.defaults();
        EpisodeRunner.Config config = new EpisodeRunner.Config(l.getTurnBudget(),
            Duration.ofMillis(l.getEpisodeTimeoutMs()),
            l.getMaxAnswerChars() > 0 ? l.getMaxAnswerChars() : d.maxAnswerChars(), d.maxNoteChars(),
            d.maxNotes(), d.maxToolCalls(),
            l.getMaxPromptChars() > 0 ? l.getMaxPromptChars() : d.maxPromptChars(),
            l.getMaxNewTokens() > 0 ? l.getMaxNewTokens() : d.maxNewTokensCap(), d.maxTraceChars(),
            l.getMaxConcurrentEpisodes() > 0 ? l.getMaxConcurrentEpisodes() : d.maxConcurrentEpisodes(),
            new SamplingParams(l.getTemperature(), l.getTopK()),
            Double.POSITIVE_INFINITY); // the worker lowers a turn's temperature to the bound
        EpisodeRunner runner = new EpisodeRunner(
            new GrpcGenerator(ModelServiceGrpc.newBlockingStub(ch), req.getSession(), template(req)),
            new RemoteTask(ToolServiceGrpc.newBlockingStub(ch), req.getSession(), req.getToolsList()),
            config);
        List<TaskProblem> problems = new ArrayList<>(req.getProblemsCount());
        for (ProblemSpec p : req.getProblemsList()) {
          problems.add(new TaskProblem(p.getId(), p.getQuestion(), ""));
        }
        List<EpisodeResult> results = runner.run(harness::newInstance, problems, req.getSamples(),
            req.getFirstSample(), req.getRunSeed());
        for (int i = 0; i < results.size(); i++) {
          obs.onNext(SandboxProtos.toReply(i, results.get(i)));
        }
        String left = leftoverHarnessWork(LEFTOVER_GRACE_MILLIS);
        if (left != null) {
          obs.onNext(EpisodeReply.newBuilder().setIndex(-1).setRecycle(left).build());
        }
        obs.onCompleted();
      } catch (Throwable t) {
        obs.onError(Status.INTERNAL.withDescription("sandbox run failed: " + t).asRuntimeException());
      }
    }
  }
}
