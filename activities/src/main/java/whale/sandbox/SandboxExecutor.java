package whale.sandbox;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.EpisodeStatus;
import whale.model.Generator;
import whale.proto.sandbox.v1.EpisodeReply;
import whale.proto.sandbox.v1.Limits;
import whale.proto.sandbox.v1.ProblemSpec;
import whale.proto.sandbox.v1.RunEpisodesRequest;
import whale.proto.sandbox.v1.ToolSpec;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * Episodes in sandbox processes. The problems are split into contiguous shards, one per pooled
 * sandbox; each shard's sandbox compiles the source and runs its episodes, calling back this JVM's
 * {@link SandboxHost} for the model (one {@link BatchGroup} per run, so the model still sees one
 * batch across shards) and the tools. The worker verifies the answers itself.
 *
 * <p>Supervision: a sandbox whose stream fails, whose process dies (crash, heap: the sandbox runs
 * with {@code -XX:+ExitOnOutOfMemoryError}), that makes more model calls than the turn budget allows,
 * or that shows no sign of life (no model or tool call, no result, no call in flight) for longer than
 * the episode timeout plus a grace is killed; every episode of its shard that did not report scores 0
 * with the reason as its error, the run goes on, and the pool starts a replacement on demand.
 */
public final class SandboxExecutor implements EpisodeExecutor {
  private final SandboxPool pool;
  private final SandboxHost host;
  private final long windowMillis;
  private final long hangGraceMillis;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "whale-sandbox-shard");
    t.setDaemon(true);
    return t;
  });

  public SandboxExecutor(SandboxPool pool, SandboxHost host, long windowMillis, long hangGraceMillis) {
    this.pool = pool;
    this.host = host;
    this.windowMillis = windowMillis;
    this.hangGraceMillis = hangGraceMillis;
  }

  /** A pool of {@code size} sandboxes of {@code heapMb} on this JVM's class path, with its own host. */
  public static SandboxExecutor create(int size, int heapMb) {
    return new SandboxExecutor(SandboxPool.forThisJvm(size, heapMb), new SandboxHost(), 20, 15_000);
  }

  public SandboxPool pool() {
    return pool;
  }

  @Override
  public List<EpisodeResult> run(Generator model, Task task, String harnessSource, List<TaskProblem> problems,
      int samples, long seed, EpisodeRunner.Config config, Consumer<String> progress) {
    if (samples < 1) {
      throw new IllegalArgumentException("samplesPerProblem must be >= 1");
    }
    if (problems.isEmpty()) {
      return List.of();
    }
    String runId = UUID.randomUUID().toString();
    int n = Math.min(pool.size(), problems.size());
    List<Future<List<EpisodeResult>>> futures = new ArrayList<>();
    try (BatchGroup group = new BatchGroup(model, config.sampling(), windowMillis, runId.substring(0, 8))) {
      for (int k = 0; k < n; k++) {
        List<TaskProblem> shard = problems.subList(k * problems.size() / n, (k + 1) * problems.size() / n);
        String shardId = runId + "/" + k;
        futures.add(threads.submit(() -> runShard(shardId, group, task, harnessSource, shard, samples, seed,
            config)));
      }
      List<EpisodeResult> out = new ArrayList<>(problems.size() * samples);
      int reported = -1;
      for (Future<List<EpisodeResult>> f : futures) {
        while (true) {
          try {
            out.addAll(f.get(1, TimeUnit.SECONDS));
            break;
          } catch (TimeoutException e) {
            int b = group.batches();
            if (b != reported) {
              reported = b;
              progress.accept("sandboxed episodes: model batch " + b);
            }
          } catch (InterruptedException e) {
            futures.forEach(x -> x.cancel(true));
            Thread.currentThread().interrupt();
            throw new IllegalStateException("episode run interrupted", e);
          } catch (ExecutionException e) {
            futures.forEach(x -> x.cancel(true));
            Throwable c = e.getCause();
            throw c instanceof RuntimeException r ? r : new IllegalStateException(c);
          }
        }
      }
      if (group.failure() != null) {
        throw new IllegalStateException("generator failed during episode run: " + group.failure(),
            group.failure());
      }
      List<EpisodeResult> scored = new ArrayList<>(out.size());
      for (int i = 0; i < out.size(); i++) {
        scored.add(verified(task, problems.get(i / samples), out.get(i), config));
      }
      return scored;
    }
  }

  /** The worker's own checks and the verifier's reward. */
  private static EpisodeResult verified(Task task, TaskProblem p, EpisodeResult r, EpisodeRunner.Config c) {
    EpisodeStatus status = r.status();
    String error = r.error();
    String answer = r.answer();
    if (answer != null && answer.length() > c.maxAnswerChars()) {
      answer = answer.substring(0, c.maxAnswerChars());
    }
    if (status == EpisodeStatus.COMPLETED && r.turns() > c.turnBudget()) {
      status = EpisodeStatus.TURN_BUDGET_EXCEEDED;
      error = "sandbox reported " + r.turns() + " model calls, over the turn budget " + c.turnBudget();
    }
    double reward = status == EpisodeStatus.COMPLETED && answer != null ? task.verify(p, answer, EpisodeResult.completions(r.modelCalls()))
        : 0.0;
    return new EpisodeResult(p.id(), r.sampleIndex(), answer, reward, r.turns(), r.modelCalls(), r.toolCalls(),
        r.notes(), status, error);
  }

  private List<EpisodeResult> runShard(String shardId, BatchGroup group, Task task, String source,
      List<TaskProblem> problems, int samples, long seed, EpisodeRunner.Config config) throws InterruptedException {
    int expected = problems.size() * samples;
    EpisodeReply[] replies = new EpisodeReply[expected];
    SandboxProcess sb = pool.acquire();
    SandboxHost.Shard shard = host.open(shardId, group, task, (long) expected * Math.max(1, config.turnBudget()));
    group.shardStarted();
    String failure = null;
    EpisodeStatus failStatus = EpisodeStatus.ERROR;
    try {
      RunEpisodesRequest.Builder req = RunEpisodesRequest.newBuilder().setSession(shardId)
          .setCallbackAddress(host.address()).setHarnessSource(source).setSamples(samples).setRunSeed(seed)
          .setLimits(Limits.newBuilder().setTurnBudget(config.turnBudget())
              .setEpisodeTimeoutMs(config.episodeTimeout().toMillis()).setMaxAnswerChars(config.maxAnswerChars())
              .setMaxConcurrentEpisodes(config.maxConcurrentEpisodes())
              .setTemperature(config.sampling().temperature()).setTopK(config.sampling().topK()));
      for (TaskProblem p : problems) {
        req.addProblems(ProblemSpec.newBuilder().setId(p.id()).setQuestion(p.question()));
      }
      for (Tool t : task.tools()) {
        req.addTools(ToolSpec.newBuilder().setName(t.name()).setDescription(t.description()));
      }
      CompletableFuture<Void> done = new CompletableFuture<>();
      String[] compileError = {null};
      sb.stub().runEpisodes(req.build(), new StreamObserver<>() {
        @Override
        public void onNext(EpisodeReply r) {
          shard.touch();
          if (!r.getCompileError().isEmpty()) {
            compileError[0] = r.getCompileError();
          } else if (r.getIndex() >= 0 && r.getIndex() < expected) {
            replies[r.getIndex()] = r;
          }
        }

        @Override
        public void onError(Throwable t) {
          done.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
          done.complete(null);
        }
      });
      long hangNanos = TimeUnit.MILLISECONDS.toNanos(config.episodeTimeout().toMillis() + hangGraceMillis);
      while (true) {
        try {
          done.get(200, TimeUnit.MILLISECONDS);
          break;
        } catch (TimeoutException e) {
          if (shard.violation != null) {
            failure = "sandbox killed: " + shard.violation;
            sb.kill(failure);
            break;
          }
          String dead = sb.deathReason();
          if (dead != null) {
            failure = dead;
            break;
          }
          if (shard.inFlight.get() == 0 && System.nanoTime() - shard.lastActivityNanos > hangNanos) {
            failure = "sandbox hung: no model call, tool call or result for "
                + TimeUnit.NANOSECONDS.toMillis(hangNanos) + " ms (episode timeout "
                + config.episodeTimeout().toMillis() + " ms + grace); process killed and replaced";
            failStatus = EpisodeStatus.TIMEOUT;
            sb.kill(failure);
            break;
          }
        } catch (ExecutionException e) {
          String dead = sb.awaitDeath(1000);
          failure = dead != null ? dead : "sandbox stream failed: " + Status.fromThrowable(e.getCause());
          if (shard.violation != null) {
            failure = "sandbox killed: " + shard.violation;
          }
          sb.kill(failure);
          break;
        } catch (InterruptedException e) {
          // the run was abandoned (its activity attempt timed out): its episodes stop with it
          // instead of running on in a sandbox the next run would get
          sb.kill("episode run abandoned");
          throw e;
        }
      }
      if (compileError[0] != null) {
        throw new IllegalArgumentException("harness does not compile: " + compileError[0]);
      }
      if (failure == null) {
        for (EpisodeReply r : replies) {
          if (r != null && EpisodeStatus.TIMEOUT.name().equals(r.getStatus())) {
            // an abandoned episode's thread may outlive Thread.stop (a loop in a finally block): a
            // sandbox that exceeded a limit is not reused
            sb.kill("recycled after an episode timeout");
            break;
          }
        }
      }
    } finally {
      group.shardFinished();
      host.close(shard);
      pool.release(sb);
    }
    List<EpisodeResult> out = new ArrayList<>(expected);
    for (int i = 0; i < expected; i++) {
      TaskProblem p = problems.get(i / samples);
      EpisodeReply r = replies[i];
      if (r != null && r.getProblemId().equals(p.id()) && r.getSampleIndex() == i % samples) {
        out.add(SandboxProtos.fromReply(r));
      } else {
        String why = failure != null ? failure : "sandbox did not report this episode";
        out.add(new EpisodeResult(p.id(), i % samples, null, 0.0, 0, List.of(), List.of(),
            List.of("[sandbox] " + why), failStatus, why));
      }
    }
    return out;
  }

  @Override
  public void close() {
    threads.shutdownNow();
    pool.close();
    host.close();
  }
}
