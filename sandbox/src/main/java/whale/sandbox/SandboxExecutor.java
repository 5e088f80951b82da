package whale.sandbox;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import whale.harness.HarnessCompiler;
import whale.model.Generator;
import whale.proto.sandbox.v1.CheckReply;
import whale.proto.sandbox.v1.CheckRequest;
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
 * the episode timeout plus a grace is killed, and the pool starts a replacement on demand. Fair
 * scoring: every episode of its shard that did not report re-runs alone in a sandbox (a shard of one
 * episode is not re-run); only an episode that breaks a limit by itself scores 0, with the reason as
 * its error, and since an episode's seeds depend only on its problem and sample index, its result
 * does not depend on which episodes shared its process. A sandbox in which harness work outlived its
 * episodes (see {@link SandboxMain#leftoverHarnessWork}) or an episode timed out is not reused.
 *
 * <p>Compilation: the worker never runs javac on untrusted source. {@link #checkHarness} compiles in a
 * pooled sandbox (its heap bounds the compiler's memory) under a deadline of
 * {@link #COMPILE_TIMEOUT_MILLIS}; a sandbox that dies or overruns is killed and the source rejected
 * with that reason.
 */
public final class SandboxExecutor implements EpisodeExecutor {
  private final SandboxPool pool;
  private final SandboxHost host;
  private final long windowMillis;
  private final long hangGraceMillis;
  private final long compileTimeoutMillis;
  /** Sandboxes one episode run takes at most: fewer than the pool lets runs go side by side. */
  private final int shardsPerRun;
  private final java.util.concurrent.atomic.AtomicInteger leftoverRecycles =
      new java.util.concurrent.atomic.AtomicInteger();
  /** The compiler's verdicts by source ("" when it compiles); sources are immutable, so never stale. */
  private final Map<String, String> checks = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, String> e) {
      return size() > 256;
    }
  };
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "whale-sandbox-shard");
    t.setDaemon(true);
    return t;
  });

  /** Most time one compilation in a sandbox may take. */
  public static final long COMPILE_TIMEOUT_MILLIS = 30_000;

  public SandboxExecutor(SandboxPool pool, SandboxHost host, long windowMillis, long hangGraceMillis) {
    this(pool, host, windowMillis, hangGraceMillis, COMPILE_TIMEOUT_MILLIS);
  }

  public SandboxExecutor(SandboxPool pool, SandboxHost host, long windowMillis, long hangGraceMillis,
      long compileTimeoutMillis) {
    this(pool, host, windowMillis, hangGraceMillis, compileTimeoutMillis, pool.size());
  }

  public SandboxExecutor(SandboxPool pool, SandboxHost host, long windowMillis, long hangGraceMillis,
      long compileTimeoutMillis, int shardsPerRun) {
    if (shardsPerRun < 1) {
      throw new IllegalArgumentException("shards per run must be >= 1, got " + shardsPerRun);
    }
    this.shardsPerRun = shardsPerRun;
    this.pool = pool;
    this.host = host;
    this.windowMillis = windowMillis;
    this.hangGraceMillis = hangGraceMillis;
    this.compileTimeoutMillis = compileTimeoutMillis;
  }

  /** A pool of {@code size} sandboxes of {@code heapMb} on this JVM's class path, with its own host. */
  public static SandboxExecutor create(int size, int heapMb) {
    return create(size, heapMb, size);
  }

  /**
   * As {@link #create(int, int)}, each episode run split over at most {@code shardsPerRun}
   * sandboxes. A run's episodes share its model calls in lock-step, so its model thread idles while
   * its shards run harness code: with one shard per run, a pool of n serves n runs at once, which is
   * what keeps the cores busy when several evaluations are waiting (a comparison's harness phases).
   */
  public static SandboxExecutor create(int size, int heapMb, int shardsPerRun) {
    return new SandboxExecutor(SandboxPool.forThisJvm(size, heapMb), new SandboxHost(), 20, 15_000,
        COMPILE_TIMEOUT_MILLIS, shardsPerRun);
  }

  public SandboxPool pool() {
    return pool;
  }

  /** Sandboxes killed because harness work outlived their episodes (tests, metrics). */
  public int leftoverRecycles() {
    return leftoverRecycles.get();
  }

  @Override
  public String checkHarness(String source) {
    String tooLong = HarnessCompiler.sizeProblem(source);
    if (tooLong != null) {
      return tooLong; // the same verdict as the compiler's, without shipping it to a sandbox
    }
    synchronized (checks) {
      String known = checks.get(source);
      if (known != null) {
        return known.isEmpty() ? null : known;
      }
    }
    String errors;
    boolean answered = false;
    SandboxProcess sb;
    try {
      sb = pool.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a sandbox to compile in", e);
    }
    try {
      CheckReply r = sb.blockingStub().withDeadlineAfter(compileTimeoutMillis, TimeUnit.MILLISECONDS)
          .check(CheckRequest.newBuilder().setHarnessSource(source).build());
      errors = r.getOk() ? "" : r.getErrors();
      answered = true;
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED) {
        errors = "compilation stopped: it ran longer than " + compileTimeoutMillis
            + " ms, the limit for compiling a harness";
      } else {
        String dead = sb.awaitDeath(2000);
        errors = dead != null
            ? "compilation stopped: the sandbox compiling it died (" + dead + "); compiling a harness may use"
                + " at most the sandbox's " + pool.heapMb() + " MiB heap (e.g. no huge constant strings)"
            : "compilation failed in the sandbox: " + e.getStatus();
      }
      sb.kill(errors);
    } finally {
      pool.release(sb);
    }
    if (answered) {
      // the compiler's verdict is a function of the source; a stop (deadline, death) may be load
      synchronized (checks) {
        checks.put(source, errors);
      }
    }
    return errors.isEmpty() ? null : errors;
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
    // compiled (bounded, in a sandbox) before any shard starts: a source that kills its compiler is a
    // bad request, never a crash to re-run episode by episode
    String errors = checkHarness(harnessSource);
    if (errors != null) {
      throw new IllegalArgumentException("harness does not compile: " + errors);
    }
    String runId = UUID.randomUUID().toString();
    int n = Math.min(Math.min(pool.size(), shardsPerRun), problems.size());
    try (BatchGroup group = new BatchGroup(model, config.sampling(), windowMillis, runId.substring(0, 8))) {
      List<Future<ShardRun>> futures = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        List<TaskProblem> shard = problems.subList(k * problems.size() / n, (k + 1) * problems.size() / n);
        String shardId = runId + "/" + k;
        futures.add(threads.submit(() -> runShard(shardId, group, task, harnessSource, shard, samples, 0, seed,
            config)));
      }
      List<ShardRun> shards = await(futures, group, progress);
      EpisodeResult[] out = new EpisodeResult[problems.size() * samples];
      List<Integer> rerunSlots = new ArrayList<>();
      List<Future<ShardRun>> reruns = new ArrayList<>();
      int base = 0;
      for (ShardRun sh : shards) {
        for (int i = 0; i < sh.expected(); i++) {
          EpisodeResult r = sh.reported(i);
          if (r != null) {
            out[base + i] = r;
          } else if (sh.failure() != null && sh.expected() > 1 && group.failure() == null) {
            // the sandbox died or was killed with other episodes in it: this one re-runs alone in a
            // sandbox of its own, so only an episode that breaks a limit by itself scores 0
            TaskProblem p = sh.problems().get(i / samples);
            int sample = i % samples;
            String rerunId = runId + "/rerun-" + (base + i);
            rerunSlots.add(base + i);
            reruns.add(threads.submit(() -> runShard(rerunId, group, task, harnessSource, List.of(p), 1, sample,
                seed, config)));
          } else {
            out[base + i] = sh.unreported(i);
          }
        }
        base += sh.expected();
      }
      if (!reruns.isEmpty()) {
        progress.accept("re-running " + reruns.size() + " episodes of crashed sandboxes one by one");
        List<ShardRun> again = await(reruns, group, progress);
        for (int j = 0; j < again.size(); j++) {
          EpisodeResult r = again.get(j).reported(0);
          out[rerunSlots.get(j)] = r != null ? r : again.get(j).unreported(0);
        }
      }
      if (group.failure() != null) {
        throw new IllegalStateException("generator failed during episode run: " + group.failure(),
            group.failure());
      }
      List<EpisodeResult> scored = new ArrayList<>(out.length);
      for (int i = 0; i < out.length; i++) {
        scored.add(verified(task, problems.get(i / samples), out[i], config));
      }
      return scored;
    }
  }

  private List<ShardRun> await(List<Future<ShardRun>> futures, BatchGroup group, Consumer<String> progress) {
    List<ShardRun> out = new ArrayList<>(futures.size());
    int reported = -1;
    for (Future<ShardRun> f : futures) {
      while (true) {
        try {
          out.add(f.get(1, TimeUnit.SECONDS));
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
    return out;
  }

  /**
   * One sandbox's episodes: problems × sample indices firstSample .. firstSample + samples - 1, the
   * replies it sent (null where it sent none) and why it failed (null when it did not).
   */
  private record ShardRun(List<TaskProblem> problems, int samples, int firstSample, EpisodeReply[] replies,
      String failure, EpisodeStatus failStatus) {
    int expected() {
      return replies.length;
    }

    /** Episode {@code i} as the sandbox reported it, or null. */
    EpisodeResult reported(int i) {
      TaskProblem p = problems.get(i / samples);
      EpisodeReply r = replies[i];
      if (r != null && r.getProblemId().equals(p.id()) && r.getSampleIndex() == firstSample + i % samples) {
        return SandboxProtos.fromReply(r);
      }
      return null;
    }

    /** Episode {@code i} scored 0 with the shard's failure. */
    EpisodeResult unreported(int i) {
      String why = failure != null ? failure : "sandbox did not report this episode";
      return new EpisodeResult(problems.get(i / samples).id(), firstSample + i % samples, null, 0.0, 0, List.of(),
          List.of(), List.of("[sandbox] " + why), failStatus, why);
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

  private ShardRun runShard(String shardId, BatchGroup group, Task task, String source,
      List<TaskProblem> problems, int samples, int firstSample, long seed, EpisodeRunner.Config config)
      throws InterruptedException {
    int expected = problems.size() * samples;
    EpisodeReply[] replies = new EpisodeReply[expected];
    SandboxProcess sb = pool.acquire();
    SandboxHost.Shard shard = host.open(shardId, group, task, (long) expected * Math.max(1, config.turnBudget()),
        config.maxPromptChars(), config.maxNewTokensCap(), config.temperatureBound());
    group.shardStarted();
    String failure = null;
    EpisodeStatus failStatus = EpisodeStatus.ERROR;
    try {
      RunEpisodesRequest.Builder req = RunEpisodesRequest.newBuilder().setSession(shardId)
          .setCallbackAddress(host.address()).setHarnessSource(source).setSamples(samples).setFirstSample(firstSample).setRunSeed(seed)
          .setLimits(Limits.newBuilder().setTurnBudget(config.turnBudget())
              .setEpisodeTimeoutMs(config.episodeTimeout().toMillis()).setMaxAnswerChars(config.maxAnswerChars())
              .setMaxConcurrentEpisodes(config.maxConcurrentEpisodes())
              .setMaxPromptChars(config.maxPromptChars()).setMaxNewTokens(config.maxNewTokensCap())
              .setTemperature(config.sampling().temperature()).setTopK(config.sampling().topK()));
      for (TaskProblem p : problems) {
        req.addProblems(ProblemSpec.newBuilder().setId(p.id()).setQuestion(p.question()));
      }
      whale.chat.ChatTemplate chat = group.model().chatTemplate();
      req.setChatTemplate(whale.proto.sandbox.v1.ChatTemplateSpec.newBuilder()
          .setSource(chat.source() == null ? "" : chat.source()).setOrigin(chat.origin())
          .setBosToken(chat.bosToken()).setEosToken(chat.eosToken()));
      for (Tool t : task.tools()) {
        req.addTools(ToolSpec.newBuilder().setName(t.name()).setDescription(t.description()));
      }
      CompletableFuture<Void> done = new CompletableFuture<>();
      String[] compileError = {null};
      String[] recycle = {null};
      sb.stub().runEpisodes(req.build(), new StreamObserver<>() {
        @Override
        public void onNext(EpisodeReply r) {
          shard.touch();
          if (!r.getCompileError().isEmpty()) {
            compileError[0] = r.getCompileError();
          } else if (!r.getRecycle().isEmpty()) {
            recycle[0] = r.getRecycle();
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
      if (failure == null && recycle[0] != null) {
        sb.kill("recycled: " + recycle[0]);
        leftoverRecycles.incrementAndGet();
      } else if (failure == null) {
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
    return new ShardRun(problems, samples, firstSample, replies, failure, failStatus);
  }

  @Override
  public void close() {
    threads.shutdownNow();
    pool.close();
    host.close();
  }
}
