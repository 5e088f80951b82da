package whale.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import whale.chat.AssistantTurn;
import whale.chat.ChatCall;
import whale.chat.ChatOptions;
import whale.chat.ChatTemplate;
import whale.chat.Message;
import whale.chat.ToolCalls;
import whale.chat.ToolSchema;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * Runs episodes (problem × sample index) of one harness against a {@link Generator} with lock-step
 * dynamic batching.
 *
 * <p>Every live episode runs its harness on its own thread. When every live episode is blocked in
 * {@link HarnessContext#generate} (or has finished), the pending requests go to the generator as ONE
 * batch, sorted by episode id (problem index × samples + sample index), so batch composition is
 * deterministic. At most {@link Config#maxConcurrentEpisodes} episodes are live; new ones are admitted
 * in id order, only at those quiescent points.
 *
 * <p>Limits: the turn budget (model calls per episode; one more call fails the episode), the episode
 * timeout (wall time the harness code itself runs, i.e. time outside {@code generate}; an episode over
 * it is abandoned, its thread interrupted and, if still alive at the end of the run, stopped), caps on
 * the answer, notes, tool calls, tool input ({@link #MAX_TOOL_INPUT_CHARS}) and prompt size. Any
 * exception fails the episode. A failed episode has reward 0 and its reason in
 * {@link EpisodeResult#error()}. A generator failure fails the whole run.
 */
public final class EpisodeRunner {

  /**
   * Episode limits and sampling.
   *
   * @param turnBudget most model calls per episode (method: at most 16)
   * @param episodeTimeout most wall time the harness code may run (time spent waiting for the model
   *     does not count)
   * @param maxAnswerChars answers are cut to this length
   * @param maxNoteChars each note is cut to this length
   * @param maxNotes notes beyond this many are dropped
   * @param maxToolCalls one more tool call fails the episode
   * @param maxPromptChars a longer prompt fails the call (IllegalArgumentException into the harness)
   * @param maxNewTokensCap requested maxNewTokens is clamped to 1..this
   * @param maxTraceChars tool input/output is cut to this length in the trace
   * @param maxConcurrentEpisodes live episodes (threads) at once; also the largest batch
   * @param sampling sampling of every model call
   * @param maxTemperature the highest temperature a chat turn may ask for (ChatOptions.temperature;
   *     higher is lowered to it); NaN: the sampling temperature
   */
  public record Config(int turnBudget, Duration episodeTimeout, int maxAnswerChars, int maxNoteChars,
      int maxNotes, int maxToolCalls, int maxPromptChars, int maxNewTokensCap, int maxTraceChars,
      int maxConcurrentEpisodes, SamplingParams sampling, double maxTemperature) {

    public static Config defaults() {
      return new Config(16, Duration.ofSeconds(10), 256, 1000, 64, 256, 4096, 64, 2000, 1024,
          SamplingParams.ROLLOUT, Double.NaN);
    }

    /** The bound a chat turn's own temperature is lowered to. */
    public double temperatureBound() {
      return Double.isNaN(maxTemperature) ? sampling.temperature() : maxTemperature;
    }

    public Config withMaxTemperature(double v) {
      return copy(c -> c.maxTemperature = v);
    }

    public Config withTurnBudget(int v) {
      return copy(c -> c.turnBudget = v);
    }

    public Config withEpisodeTimeout(Duration v) {
      return copy(c -> c.episodeTimeout = v);
    }

    public Config withMaxConcurrentEpisodes(int v) {
      return copy(c -> c.maxConcurrentEpisodes = v);
    }

    /** The prompt and new-token caps of the model the episodes call. */
    public Config withModelLimits(whale.model.ModelLimits v) {
      return copy(c -> {
        c.maxPromptChars = v.maxPromptChars();
        c.maxNewTokensCap = v.maxNewTokens();
      });
    }

    public Config withSampling(SamplingParams v) {
      return copy(c -> c.sampling = v);
    }

    /** This config with {@code change} applied to a copy of its fields: what every wither is. */
    private Config copy(java.util.function.Consumer<Fields> change) {
      Fields f = new Fields(this);
      change.accept(f);
      return f.config();
    }

    /** A Config's fields, mutable while a wither changes them. */
    private static final class Fields {
      int turnBudget;
      Duration episodeTimeout;
      int maxAnswerChars;
      int maxNoteChars;
      int maxNotes;
      int maxToolCalls;
      int maxPromptChars;
      int maxNewTokensCap;
      int maxTraceChars;
      int maxConcurrentEpisodes;
      SamplingParams sampling;
      double maxTemperature;

      Fields(Config c) {
        turnBudget = c.turnBudget;
        episodeTimeout = c.episodeTimeout;
        maxAnswerChars = c.maxAnswerChars;
        maxNoteChars = c.maxNoteChars;
        maxNotes = c.maxNotes;
        maxToolCalls = c.maxToolCalls;
        maxPromptChars = c.maxPromptChars;
        maxNewTokensCap = c.maxNewTokensCap;
        maxTraceChars = c.maxTraceChars;
        maxConcurrentEpisodes = c.maxConcurrentEpisodes;
        sampling = c.sampling;
        maxTemperature = c.maxTemperature;
      }

      Config config() {
        return new Config(turnBudget, episodeTimeout, maxAnswerChars, maxNoteChars, maxNotes,
            maxToolCalls, maxPromptChars, maxNewTokensCap, maxTraceChars, maxConcurrentEpisodes,
            sampling, maxTemperature);
      }
    }
  }

  /** Observes each batch sent to the generator (tests, metrics). */
  public interface BatchListener {
    void onBatch(List<Integer> episodeIds, List<GenerationRequest> requests);
  }

  /**
   * Longest tool input (characters): tool inputs are positions, questions and queries, and a harness
   * must not make the worker process megabytes per call. Longer inputs fail the call with an
   * IllegalArgumentException into the harness; the worker's host refuses them too.
   */
  public static final int MAX_TOOL_INPUT_CHARS = 4096;

  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  private static final long STOP_GRACE_MILLIS = 500;
  private static final int MAX_STOPS = 100;

  private final Generator generator;
  private final Task task;
  private final Config config;
  private volatile BatchListener batchListener;

  public EpisodeRunner(Generator generator, Task task, Config config) {
    if (config.turnBudget() < 0 || config.maxConcurrentEpisodes() < 1) {
      throw new IllegalArgumentException("bad config " + config);
    }
    this.generator = generator;
    this.task = task;
    this.config = config;
  }

  public EpisodeRunner(Generator generator, Task task) {
    this(generator, task, Config.defaults());
  }

  public Config config() {
    return config;
  }

  public void setBatchListener(BatchListener listener) {
    this.batchListener = listener;
  }

  /** Runs {@code samplesPerProblem} episodes of a compiled harness per problem; a fresh instance each. */
  public List<EpisodeResult> run(CompiledHarness harness, List<TaskProblem> problems, int samplesPerProblem,
      long runSeed) {
    return run(harness::newInstance, problems, samplesPerProblem, runSeed);
  }

  /**
   * Runs {@code samplesPerProblem} episodes per problem. {@code harnessFactory} is called once per
   * episode, on the episode's thread. Results are in episode order (problem order, then sample index).
   */
  public List<EpisodeResult> run(Supplier<? extends Harness> harnessFactory, List<TaskProblem> problems,
      int samplesPerProblem, long runSeed) {
    return run(harnessFactory, problems, samplesPerProblem, 0, runSeed);
  }

  /**
   * Like {@link #run(Supplier, List, int, long)} with sample indices {@code firstSample ..
   * firstSample + samplesPerProblem - 1}: an episode's seeds depend on its sample index, not on which
   * episodes run with it, so a re-run of one episode alone gives the same result.
   */
  public List<EpisodeResult> run(Supplier<? extends Harness> harnessFactory, List<TaskProblem> problems,
      int samplesPerProblem, int firstSample, long runSeed) {
    if (firstSample < 0) {
      throw new IllegalArgumentException("firstSample must be >= 0");
    }
    return new Run(harnessFactory, problems, samplesPerProblem, firstSample, runSeed).execute();
  }

  private enum State { RUNNING, WAITING, DONE }

  private final class Run {
    final Supplier<? extends Harness> factory;
    final List<TaskProblem> problems;
    final int samples;
    final long runSeed;
    final ReentrantLock lock = new ReentrantLock();
    final Condition coordinator = lock.newCondition();
    final Episode[] episodes;
    final TreeMap<Integer, Episode> live = new TreeMap<>();
    final List<Thread> abandonedThreads = new ArrayList<>();
    // the model's chat template, read once per run (a Hugging Face checkpoint's, or the builtin one)
    final ChatTemplate template = generator.chatTemplate();
    int running;

    Run(Supplier<? extends Harness> factory, List<TaskProblem> problems, int samples, int firstSample,
        long runSeed) {
      if (samples < 1) {
        throw new IllegalArgumentException("samplesPerProblem must be >= 1");
      }
      this.factory = factory;
      this.problems = List.copyOf(problems);
      this.samples = samples;
      this.runSeed = runSeed;
      this.episodes = new Episode[this.problems.size() * samples];
      for (int i = 0; i < episodes.length; i++) {
        episodes[i] = new Episode(this, i, this.problems.get(i / samples), firstSample + i % samples);
      }
    }

    List<EpisodeResult> execute() {
      int next = 0;
      lock.lock();
      try {
        while (true) {
          while (next < episodes.length && live.size() < config.maxConcurrentEpisodes()) {
            start(episodes[next++]);
          }
          awaitQuiescent();
          if (next < episodes.length && live.size() < config.maxConcurrentEpisodes()) {
            continue;
          }
          List<Episode> batch = new ArrayList<>();
          for (Episode e : live.values()) {
            if (e.state == State.WAITING) {
              batch.add(e);
            }
          }
          if (batch.isEmpty()) {
            if (next >= episodes.length && live.isEmpty()) {
              break;
            }
            continue;
          }
          List<GenerationRequest> requests = new ArrayList<>(batch.size());
          List<Integer> ids = new ArrayList<>(batch.size());
          for (Episode e : batch) {
            requests.add(e.pending);
            ids.add(e.id);
          }
          List<Completion> completions;
          lock.unlock();
          try {
            BatchListener l = batchListener;
            if (l != null) {
              l.onBatch(List.copyOf(ids), List.copyOf(requests));
            }
            completions = generator.generate(requests, config.sampling());
            if (completions == null || completions.size() != requests.size()) {
              throw new IllegalStateException("generator returned "
                  + (completions == null ? "null" : completions.size()) + " completions for "
                  + requests.size() + " requests");
            }
          } catch (RuntimeException | Error ex) {
            lock.lock();
            abortAll("generator failed: " + ex);
            throw new IllegalStateException("generator failed during episode run: " + ex, ex);
          }
          lock.lock();
          long now = System.nanoTime();
          for (int i = 0; i < batch.size(); i++) {
            Episode e = batch.get(i);
            e.response = completions.get(i);
            e.pending = null;
            e.state = State.RUNNING;
            e.runningSince = now;
            running++;
            e.wake.signal();
          }
        }
      } finally {
        if (lock.isHeldByCurrentThread()) {
          lock.unlock();
        }
        stopAbandoned();
      }
      List<EpisodeResult> out = new ArrayList<>(episodes.length);
      for (Episode e : episodes) {
        out.add(e.result);
      }
      return out;
    }

    private void start(Episode e) {
      e.state = State.RUNNING;
      e.runningSince = System.nanoTime();
      running++;
      live.put(e.id, e);
      Thread t = new Thread(null, e::runHarness, "whale-episode-" + e.id, 512 * 1024);
      t.setDaemon(true);
      e.thread = t;
      t.start();
    }

    /** Waits (lock held) until no live episode is running harness code, abandoning those over time. */
    private void awaitQuiescent() {
      long timeout = config.episodeTimeout().toNanos();
      long lastScan = System.nanoTime();
      while (running > 0) {
        try {
          coordinator.awaitNanos(POLL_NANOS);
        } catch (InterruptedException ie) {
          abortAll("run interrupted");
          Thread.currentThread().interrupt();
          throw new IllegalStateException("episode run interrupted", ie);
        }
        long now = System.nanoTime();
        if (running > 0 && now - lastScan >= POLL_NANOS) {
          lastScan = now;
          for (Episode e : new ArrayList<>(live.values())) {
            if (e.state == State.RUNNING && e.harnessNanos + (now - e.runningSince) > timeout) {
              abandon(e, EpisodeStatus.TIMEOUT, "timeout: harness code ran "
                  + TimeUnit.NANOSECONDS.toMillis(e.harnessNanos + (now - e.runningSince))
                  + " ms without finishing or calling the model (limit "
                  + config.episodeTimeout().toMillis() + " ms); episode abandoned");
            }
          }
        }
      }
    }

    private void abandon(Episode e, EpisodeStatus status, String reason) {
      if (e.state == State.RUNNING) {
        running--;
      }
      e.abandoned = true;
      e.state = State.DONE;
      live.remove(e.id);
      e.result = e.buildResult(null, List.of(), status, reason);
      e.wake.signal();
      if (e.thread != null) {
        e.thread.interrupt();
        abandonedThreads.add(e.thread);
      }
    }

    private void abortAll(String reason) {
      for (Episode e : new ArrayList<>(live.values())) {
        abandon(e, EpisodeStatus.ERROR, reason);
      }
      for (Episode e : episodes) {
        if (e.result == null) {
          e.result = e.buildResult(null, List.of(), EpisodeStatus.ERROR, reason);
        }
      }
    }

    @SuppressWarnings({"deprecation", "removal"})
    private void stopAbandoned() {
      long deadline = System.currentTimeMillis() + STOP_GRACE_MILLIS;
      long stopDeadline = deadline + STOP_GRACE_MILLIS;
      for (Thread t : abandonedThreads) {
        try {
          t.join(Math.max(1, deadline - System.currentTimeMillis()));
          // each stop unwinds one level of finally blocks only (loops nested in finally blocks): stop
          // again until the thread is gone, within a bound (a sandbox that still has one is recycled)
          for (int k = 0; t.isAlive() && k < MAX_STOPS && System.currentTimeMillis() < stopDeadline; k++) {
            t.stop();
            t.join(10);
          }
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          break;
        } catch (UnsupportedOperationException | SecurityException ignored) {
          // a runaway daemon thread is left behind; the sandbox is recycled after a timeout
        }
      }
    }
  }

  /** {@code text} up to and including the first of {@code stop} to occur in it. */
  static String cutAtStop(String text, List<String> stop) {
    int cut = text.length();
    for (String s : stop) {
      int at = s.isEmpty() ? -1 : text.indexOf(s);
      if (at >= 0) {
        cut = Math.min(cut, at + s.length());
      }
    }
    return text.substring(0, cut);
  }

  private final class Episode implements HarnessContext {
    final Run run;
    final int id;
    final TaskProblem problem;
    final int sample;
    final Condition wake;
    final List<ModelCall> modelCalls = new ArrayList<>();
    final List<ToolCall> toolCalls = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    Thread thread;
    State state;
    GenerationRequest pending;
    Completion response;
    long runningSince;
    long harnessNanos;
    boolean abandoned;
    boolean notesTruncated;
    EpisodeStatus limitStatus;
    String limitReason;
    EpisodeResult result;

    Episode(Run run, int id, TaskProblem problem, int sample) {
      this.run = run;
      this.id = id;
      this.problem = problem;
      this.sample = sample;
      this.wake = run.lock.newCondition();
    }

    void runHarness() {
      String answer = null;
      List<String> resultNotes = List.of();
      Throwable error = null;
      try {
        Harness h = run.factory.get();
        HarnessResult r = h.solve(problem.toProblem(), this);
        if (r == null) {
          error = new IllegalStateException("harness returned null");
        } else {
          answer = r.answer();
          resultNotes = r.notes();
        }
      } catch (Throwable t) {
        error = t;
      }
      run.lock.lock();
      try {
        if (abandoned) {
          return;
        }
        run.running--;
        state = State.DONE;
        run.live.remove(id);
        if (limitStatus != null) {
          result = buildResult(answer, resultNotes, limitStatus, limitReason);
        } else if (error != null) {
          result = buildResult(answer, resultNotes, EpisodeStatus.ERROR, describe(error));
        } else {
          result = buildResult(answer, resultNotes, EpisodeStatus.COMPLETED, null);
        }
        run.coordinator.signal();
      } finally {
        run.lock.unlock();
      }
    }

    /** Lock held. */
    EpisodeResult buildResult(String answer, List<String> extraNotes, EpisodeStatus status, String error) {
      for (String n : extraNotes) {
        addNote(n);
      }
      String a = answer == null ? null : cap(answer, config.maxAnswerChars());
      double reward = 0.0;
      if (status == EpisodeStatus.COMPLETED) {
        reward = a == null ? 0.0 : task.verify(problem, a, EpisodeResult.completions(modelCalls));
      }
      List<String> n = new ArrayList<>(notes);
      if (notesTruncated) {
        n.add("[further notes dropped: more than " + config.maxNotes() + "]");
      }
      return new EpisodeResult(problem.id(), sample, a, reward, modelCalls.size(), modelCalls, toolCalls, n,
          status, error);
    }

    private void fail(EpisodeStatus status, String reason) {
      if (limitStatus == null) {
        limitStatus = status;
        limitReason = reason;
      }
      throw new HarnessLimitException(reason);
    }

    @Override
    public String generate(String prompt, int maxNewTokens) {
      return call(prompt, maxNewTokens, null, List.of(), null);
    }

    @Override
    public AssistantTurn chat(List<Message> messages, ChatOptions options) {
      if (messages == null || messages.isEmpty()) {
        throw new IllegalArgumentException("chat needs at least one message");
      }
      ChatOptions o = options == null ? ChatOptions.of(config.maxNewTokensCap()) : options;
      ChatCall asked = new ChatCall(messages, o.tools());
      String prompt;
      try {
        prompt = run.template.prompt(asked.messages(), asked.tools());
      } catch (ChatTemplate.ChatTemplateException e) {
        throw new IllegalArgumentException(e.getMessage());
      }
      return ToolCalls.parse(call(prompt, o.maxNewTokens(), asked, o.stop(), o.temperature()));
    }

    @Override
    public List<ToolSchema> tools() {
      return task.tools().stream().map(Tool::schema).toList();
    }

    /** One model call (a chat turn when {@code chat} is set); its text cut after the first stop string. */
    private String call(String prompt, int maxNewTokens, ChatCall chat, List<String> stop,
        Double temperature) {
      run.lock.lock();
      try {
        checkAlive();
        if (prompt == null) {
          throw new NullPointerException("prompt");
        }
        if (modelCalls.size() >= config.turnBudget()) {
          fail(EpisodeStatus.TURN_BUDGET_EXCEEDED, "turn budget exceeded: model call "
              + (modelCalls.size() + 1) + " of at most " + config.turnBudget());
        }
        if (prompt.length() > config.maxPromptChars()) {
          throw new IllegalArgumentException("prompt of " + prompt.length() + " chars exceeds the cap of "
              + config.maxPromptChars());
        }
        int callIndex = modelCalls.size();
        int max = Math.max(1, Math.min(maxNewTokens, config.maxNewTokensCap()));
        long seed = EpisodeSeeds.requestSeed(run.runSeed, problem.id(), sample, callIndex);
        pending = new GenerationRequest(prompt, seed, max, chat != null,
            temperature == null ? null : Math.min(temperature, config.temperatureBound()));
        harnessNanos += System.nanoTime() - runningSince;
        state = State.WAITING;
        run.running--;
        if (run.running == 0) {
          run.coordinator.signal();
        }
        while (state == State.WAITING) {
          wake.awaitUninterruptibly();
        }
        checkAlive();
        Completion c = response;
        response = null;
        String text = cutAtStop(c.text() == null ? "" : c.text(), stop);
        modelCalls.add(new ModelCall(callIndex, prompt, max, seed, text, c.promptTokens(), c.completionTokens(),
            chat));
        if (c.error() != null) {
          fail(EpisodeStatus.ERROR, "model call " + (callIndex + 1) + ": " + c.error());
        }
        return text;
      } finally {
        run.lock.unlock();
      }
    }

    @Override
    public String tool(String name, String input) {
      Tool t;
      run.lock.lock();
      try {
        checkAlive();
        if (toolCalls.size() >= config.maxToolCalls()) {
          fail(EpisodeStatus.ERROR, "tool call limit exceeded: more than " + config.maxToolCalls());
        }
        t = name == null ? null : task.tool(name);
        if (t == null) {
          String msg = "unknown tool '" + name + "'; available: "
              + task.tools().stream().map(Tool::name).toList();
          toolCalls.add(new ToolCall(String.valueOf(name), cap(String.valueOf(input), config.maxTraceChars()),
              "ERROR: " + msg));
          throw new IllegalArgumentException(msg);
        }
        if (input != null && input.length() > MAX_TOOL_INPUT_CHARS) {
          String msg = toolInputTooLong(name, input.length());
          toolCalls.add(new ToolCall(name, cap(input, config.maxTraceChars()), "ERROR: " + msg));
          throw new IllegalArgumentException(msg);
        }
      } finally {
        run.lock.unlock();
      }
      String out = t.apply(input == null ? "" : input);
      run.lock.lock();
      try {
        checkAlive();
        toolCalls.add(new ToolCall(name, cap(String.valueOf(input), config.maxTraceChars()),
            cap(String.valueOf(out), config.maxTraceChars())));
      } finally {
        run.lock.unlock();
      }
      return out;
    }

    @Override
    public int turnsUsed() {
      run.lock.lock();
      try {
        return modelCalls.size();
      } finally {
        run.lock.unlock();
      }
    }

    @Override
    public int turnBudget() {
      return config.turnBudget();
    }

    @Override
    public void note(String text) {
      run.lock.lock();
      try {
        checkAlive();
        addNote(text);
      } finally {
        run.lock.unlock();
      }
    }

    private void addNote(String text) {
      if (notes.size() >= config.maxNotes()) {
        notesTruncated = true;
        return;
      }
      notes.add(cap(String.valueOf(text), config.maxNoteChars()));
    }

    private void checkAlive() {
      if (abandoned) {
        throw new HarnessLimitException("episode was abandoned");
      }
    }
  }

  /** The error of a tool call whose input is over {@link #MAX_TOOL_INPUT_CHARS}. */
  public static String toolInputTooLong(String tool, int length) {
    return "tool '" + tool + "': input of " + length + " characters exceeds the cap of " + MAX_TOOL_INPUT_CHARS;
  }

  static String cap(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max);
  }

  static String describe(Throwable t) {
    StringBuilder b = new StringBuilder(t.toString());
    for (StackTraceElement f : t.getStackTrace()) {
      b.append(" at ").append(f);
      break;
    }
    Throwable c = t.getCause();
    if (c != null && c != t) {
      b.append("; caused by ").append(c);
    }
    return cap(b.toString(), 1000);
  }

  /** Groups results by problem id, in first-seen order (for mean@k). */
  public static Map<String, List<EpisodeResult>> byProblem(List<EpisodeResult> results) {
    Map<String, List<EpisodeResult>> m = new java.util.LinkedHashMap<>();
    for (EpisodeResult r : results) {
      m.computeIfAbsent(r.problemId(), k -> new ArrayList<>()).add(r);
    }
    return m;
  }
}
