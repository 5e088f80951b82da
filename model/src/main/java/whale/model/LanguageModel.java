package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.jni.JniUtils;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The policy: a {@link TinyGpt} with its AdamW state, able to sample completions, fine-tune on
 * (prompt, completion) pairs, pretrain on raw text, and checkpoint itself to one file.
 *
 * <p>Conventions shared by sampling and training, so that what is trained is what is sampled:
 *
 * <ul>
 *   <li>text goes through {@link CharTokenizer} (unknown characters become '?');
 *   <li>an empty prompt is read as "\n" (the start of a line), so there is always a token to
 *       condition on;
 *   <li>the model sees at most {@code contextLength} tokens: longer inputs lose their left end.
 * </ul>
 *
 * <p>Calls are serialised on the instance; models train at once on different threads
 * ({@link Backprop}).
 */
public final class LanguageModel implements Policy {
  static {
    EngineSettings.apply(); // before the engine starts: pins, offline, threads (one place for both models)
  }

  /** Most rows in one forward pass while sampling: bounds native memory. */
  static final int SAMPLE_CHUNK = 256;

  private final ModelConfig config;
  private final NDManager manager;
  private final TinyGpt gpt;
  private final AdamW optimizer;

  private LanguageModel(ModelConfig config, NDManager manager, TinyGpt gpt) {
    this.config = config;
    this.manager = manager;
    this.gpt = gpt;
    this.optimizer =
        new AdamW(gpt.weights(), new HashSet<>(TinyGpt.decayed(config)), manager);
  }

  /** A freshly initialised model; the same config and seed give the same weights. */
  public static LanguageModel create(ModelConfig config, long seed) {
    checkVocab(config);
    NDManager manager = NDManager.newBaseManager();
    return new LanguageModel(config, manager, TinyGpt.initialize(config, manager, seed));
  }

  /** Restores exactly what {@link #save} wrote: config, weights and optimizer state. */
  public static LanguageModel load(Path file) throws IOException {
    Checkpoint cp = Checkpoint.read(file);
    if (cp.config.vocabSize() != CharTokenizer.VOCAB_SIZE) {
      throw new IOException(file + ": checkpoint vocabulary size " + cp.config.vocabSize()
          + " does not match the tokenizer's " + CharTokenizer.VOCAB_SIZE);
    }
    NDManager manager = NDManager.newBaseManager();
    LanguageModel model =
        new LanguageModel(cp.config, manager, TinyGpt.fromValues(cp.config, manager, cp.params));
    model.optimizer.restore(cp.step, cp.m, cp.v);
    return model;
  }

  /** Writes config, weights and optimizer state to {@code file}, atomically. */
  public synchronized void save(Path file) throws IOException {
    Map<String, float[]> params = new LinkedHashMap<>();
    Map<String, float[]> m = new LinkedHashMap<>();
    Map<String, float[]> v = new LinkedHashMap<>();
    for (Map.Entry<String, NDArray> e : gpt.weights().entrySet()) {
      params.put(e.getKey(), e.getValue().toFloatArray());
      m.put(e.getKey(), optimizer.firstMoment(e.getKey()).toFloatArray());
      v.put(e.getKey(), optimizer.secondMoment(e.getKey()).toFloatArray());
    }
    new Checkpoint(config, params, optimizer.stepCount(), m, v).write(file);
  }

  public ModelConfig config() {
    return config;
  }

  TinyGpt gpt() {
    return gpt;
  }

  public long parameterCount() {
    return gpt.parameterCount();
  }

  /** Optimizer steps taken over this model's whole life (restored by {@link #load}). */
  public synchronized long optimizerSteps() {
    return optimizer.stepCount();
  }

  // ---------------------------------------------------------------- sampling

  /** Half the window as new characters (a one-line tool call is about 70), at least 64 as before. */
  @Override
  public ModelLimits limits() {
    return new ModelLimits(ModelLimits.BUILTIN.maxPromptChars(),
        Math.max(ModelLimits.BUILTIN.maxNewTokens(), config.contextLength() / 2));
  }

  /**
   * Samples one completion per request. Each row stops after a '\n' (kept in the text) or after its
   * {@code maxNewTokens}. Every request draws from its own {@code SplittableRandom(seed)}, and rows
   * never see each other (causal mask, right padding), so a completion does not depend on what else
   * shares the batch.
   */
  @Override
  public synchronized List<Completion> generate(
      List<GenerationRequest> requests, SamplingParams params) {
    return Generator.byTemperature(requests, params, this::generateAt); // a chat turn's own temperature
  }

  private List<Completion> generateAt(List<GenerationRequest> requests, SamplingParams params) {
    if (params.temperature() < 0 || params.topK() < 0 || Double.isNaN(params.temperature())) {
      throw new IllegalArgumentException("bad sampling params: " + params);
    }
    Completion[] out = new Completion[requests.size()];
    // Similar lengths together means less padding; the order cannot change any row's result.
    Integer[] order = new Integer[requests.size()];
    Arrays.setAll(order, i -> i);
    Arrays.sort(order, Comparator.comparingInt(i -> requests.get(i).prompt().length()));
    for (int from = 0; from < order.length; from += SAMPLE_CHUNK) {
      int to = Math.min(order.length, from + SAMPLE_CHUNK);
      generateChunk(requests, Arrays.copyOfRange(order, from, to), params, out);
    }
    return Arrays.asList(out);
  }

  private void generateChunk(
      List<GenerationRequest> requests, Integer[] rows, SamplingParams params, Completion[] out) {
    int n = rows.length;
    int ctx = config.contextLength();
    int vocab = config.vocabSize();
    int[][] seq = new int[n][];
    int[] len = new int[n];
    int[] promptLen = new int[n];
    int[] promptSeen = new int[n];
    StringBuilder[] text = new StringBuilder[n];
    SplittableRandom[] rng = new SplittableRandom[n];
    boolean[] done = new boolean[n];
    int longest = 0;
    for (int r = 0; r < n; r++) {
      GenerationRequest req = requests.get(rows[r]);
      int[] prompt = promptTokens(req.prompt());
      int maxNew = Math.max(0, req.maxNewTokens());
      seq[r] = Arrays.copyOf(prompt, prompt.length + maxNew);
      len[r] = prompt.length;
      promptLen[r] = prompt.length;
      promptSeen[r] = Math.min(prompt.length, ctx);
      text[r] = new StringBuilder();
      rng[r] = new SplittableRandom(req.seed());
      done[r] = maxNew == 0;
      longest = Math.max(longest, seq[r].length);
    }
    // The first step computes every window whole and keeps its keys and values; later steps feed one
    // token per row (TinyGpt.stepLogits: the same logits, bit for bit). A window that slides (the
    // sequence outgrew the context, so every position moves) is computed whole at every step.
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false); // sampling records no graph (the cache is written in place)
    try (NDManager sub = manager.newSubManager()) {
      TinyGpt.KvCache cache = null;
      int[] holder = null; // cache row -> chunk row whose window it holds, -1: none (filler)
      while (true) {
        int[] active = activeRows(done);
        if (active.length == 0) {
          break;
        }
        float[][] rowLogits = new float[n][];
        if (cache == null) { // the first step
          int[][] windows = windows(seq, len, active, ctx);
          int capacity = Math.min(ctx, longest);
          holder = new int[gemmRows(active.length)];
          cache = new TinyGpt.KvCache(sub, config, holder.length, Math.max(capacity, width(windows)));
          float[] logits = nextLogits(windows, sub, cache);
          Arrays.fill(holder, -1);
          for (int i = 0; i < active.length; i++) { // a slid window is let go after the draw below
            rowLogits[active[i]] = Arrays.copyOfRange(logits, i * vocab, (i + 1) * vocab);
            holder[i] = active[i];
          }
        } else {
          holder = compact(cache, holder, done, sub);
          stepCached(cache, holder, seq, len, sub, rowLogits);
          int[] slid = Arrays.stream(active).filter(r -> rowLogits[r] == null).toArray();
          if (slid.length > 0) {
            float[] logits = nextLogits(windows(seq, len, slid, ctx));
            for (int i = 0; i < slid.length; i++) {
              rowLogits[slid[i]] = Arrays.copyOfRange(logits, i * vocab, (i + 1) * vocab);
            }
          }
        }
        for (int r : active) {
          int next = sample(rowLogits[r], 0, vocab, params, rng[r]);
          seq[r][len[r]++] = next;
          text[r].append(CharTokenizer.decode(next));
          if (next == CharTokenizer.NEWLINE || len[r] == seq[r].length) {
            done[r] = true;
          }
        }
        for (int i = 0; i < holder.length; i++) { // a window that outgrew the context slides from now on
          if (holder[i] >= 0 && (done[holder[i]] || len[holder[i]] > ctx)) {
            holder[i] = -1;
          }
        }
      }
      if (cache != null) {
        cache.close();
      }
    } finally {
      JniUtils.setGradMode(grad);
    }
    for (int r = 0; r < n; r++) {
      out[rows[r]] = new Completion(text[r].toString(), promptSeen[r], len[r] - promptLen[r]);
    }
  }

  /** Each listed row's window: its last min(len, ctx) tokens. */
  private static int[][] windows(int[][] seq, int[] len, int[] rows, int ctx) {
    int[][] windows = new int[rows.length][];
    for (int i = 0; i < rows.length; i++) {
      int r = rows[i];
      windows[i] = Arrays.copyOfRange(seq[r], len[r] - Math.min(len[r], ctx), len[r]);
    }
    return windows;
  }

  /**
   * Drops cache rows no window needs once a quarter or more of them are idle, keeping at least
   * {@link #MIN_GEMM_ROWS} (idle ones fill up); returns the new row holders.
   */
  private static int[] compact(TinyGpt.KvCache cache, int[] holder, boolean[] done, NDManager m) {
    int live = (int) Arrays.stream(holder).filter(r -> r >= 0).count();
    int keep = gemmRows(live);
    if (keep >= holder.length || live > holder.length * 3 / 4) {
      return holder;
    }
    int[] index = new int[keep];
    int k = 0;
    for (int i = 0; i < holder.length && k < live; i++) {
      if (holder[i] >= 0) {
        index[k++] = i;
      }
    }
    for (int i = 0; i < holder.length && k < keep; i++) { // fillers
      if (holder[i] < 0) {
        index[k++] = i;
      }
    }
    Arrays.sort(index);
    try (NDArray idx = m.create(Arrays.stream(index).asLongStream().toArray())) {
      cache.keepRows(idx);
    }
    return Arrays.stream(index).map(i -> holder[i]).toArray();
  }

  /** One token for every cache row (fillers feed a pad at column 0 of their own row; ignored). */
  private void stepCached(TinyGpt.KvCache cache, int[] holder, int[][] seq, int[] len, NDManager m,
      float[][] rowLogits) {
    if (Arrays.stream(holder).noneMatch(r -> r >= 0)) {
      return;
    }
    int b = holder.length;
    int[] tokens = new int[b];
    int[] positions = new int[b];
    for (int i = 0; i < b; i++) {
      int r = holder[i];
      if (r >= 0) {
        tokens[i] = seq[r][len[r] - 1];
        positions[i] = len[r] - 1;
      }
    }
    float[] logits;
    try (NDManager step = m.newSubManager();
        NDScope scope = new NDScope()) {
      logits = gpt.stepLogits(step.create(tokens, new Shape(b, 1)), positions, cache,
          Math.min(MIN_WIDTH, config.contextLength())).toFloatArray();
    }
    int vocab = config.vocabSize();
    for (int i = 0; i < b; i++) {
      if (holder[i] >= 0) {
        rowLogits[holder[i]] = Arrays.copyOfRange(logits, i * vocab, (i + 1) * vocab);
      }
    }
  }

  /**
   * Smallest batch and width of a sampling forward pass. libtorch's CPU kernels (single thread) sum
   * in another order when a matrix product has few rows, and when the sequence is shorter than 16
   * positions (attention's products and softmax over T). Few is 1 to 3 rows for MKL's own dispatch
   * and 1 to 7 for its COMPATIBLE branch, which whale pins by default ({@link CpuPins}; measured:
   * SGEMM row 0 for M = 1..64 and up to 2048, K = 64..4864, N = 64..1536; widths 16..80 for windows
   * of 2, 7 and 20 tokens); beyond row 0, the last M mod 4 rows also sum apart ({@link #gemmRows}).
   * Padding to these sizes keeps a row's result independent of how many rows happened to share its
   * batch: without it runs whose batches are cut by timing (the sandbox pool) differed from process
   * to process.
   */
  static final int MIN_GEMM_ROWS = 8;
  static final int MIN_WIDTH = 16;

  /**
   * The next-token logits after each window ([rows × vocab], flattened). Rows are right-padded to a
   * common width of at least {@link #MIN_WIDTH} and the batch to a multiple of {@link #MIN_GEMM_ROWS}; a row's logits depend only on its own
   * window, bit for bit, whatever shares the batch (causal mask, right padding: padded positions and
   * padded rows contribute exact zeros).
   */
  float[] nextLogits(int[][] windows) {
    return nextLogits(windows, manager, null);
  }

  /**
   * Rows of a pass over {@code n} windows: a multiple of {@link #MIN_GEMM_ROWS}. MKL's COMPATIBLE
   * SGEMM sums the last M mod 4 rows of a product in another order than the others (measured:
   * without this, rows 8-10 of 11 differed from the same windows alone), so every GEMM of a pass
   * (the head's M is the row count, the projections' M is rows x width) has whole blocks only.
   */
  static int gemmRows(int n) {
    return Math.max(1, (n + MIN_GEMM_ROWS - 1) / MIN_GEMM_ROWS) * MIN_GEMM_ROWS;
  }

  /** Common width of a pass over {@code windows}: the longest, at least {@link #MIN_WIDTH}. */
  private int width(int[][] windows) {
    int width = Math.min(MIN_WIDTH, config.contextLength());
    for (int[] w : windows) {
      width = Math.max(width, w.length);
    }
    return width;
  }

  /** As {@link #nextLogits(int[][])}, keeping every layer's keys and values in {@code cache} (or none). */
  float[] nextLogits(int[][] windows, NDManager parent, TinyGpt.KvCache cache) {
    int rows = gemmRows(windows.length);
    int width = width(windows);
    int[] flat = new int[rows * width]; // CharTokenizer.PAD is 0
    int[] last = new int[rows];
    for (int i = 0; i < windows.length; i++) {
      System.arraycopy(windows[i], 0, flat, i * width, windows[i].length);
      last[i] = windows[i].length - 1;
    }
    float[] logits;
    try (NDManager sub = parent.newSubManager();
        NDScope scope = new NDScope()) {
      NDArray tokens = sub.create(flat, new Shape(rows, width));
      logits = gpt.lastLogits(tokens, last, cache).toFloatArray();
    }
    return windows.length == rows ? logits
        : Arrays.copyOf(logits, windows.length * config.vocabSize());
  }

  private static int[] activeRows(boolean[] done) {
    int count = 0;
    for (boolean d : done) {
      count += d ? 0 : 1;
    }
    int[] active = new int[count];
    for (int r = 0, i = 0; r < done.length; r++) {
      if (!done[r]) {
        active[i++] = r;
      }
    }
    return active;
  }

  /**
   * Draws the next token from one row of logits: argmax when temperature is 0, else softmax(logit /
   * temperature) over the topK highest logits (all when topK is 0). Padding is never drawn.
   */
  static int sample(
      float[] logits, int offset, int vocab, SamplingParams params, SplittableRandom rng) {
    if (params.temperature() == 0) {
      int best = 1;
      for (int id = 2; id < vocab; id++) {
        if (logits[offset + id] > logits[offset + best]) {
          best = id;
        }
      }
      return best;
    }
    Integer[] ids = new Integer[vocab - 1];
    Arrays.setAll(ids, i -> i + 1);
    // Highest logit first; ties by id, so the candidate list is fully deterministic.
    Arrays.sort(ids, (a, b) -> {
      int c = Float.compare(logits[offset + b], logits[offset + a]);
      return c != 0 ? c : Integer.compare(a, b);
    });
    int k = params.topK() == 0 ? ids.length : Math.min(params.topK(), ids.length);
    double max = logits[offset + ids[0]];
    double[] weight = new double[k];
    double total = 0;
    for (int i = 0; i < k; i++) {
      weight[i] = Math.exp((logits[offset + ids[i]] - max) / params.temperature());
      total += weight[i];
    }
    double u = rng.nextDouble() * total;
    for (int i = 0; i < k; i++) {
      u -= weight[i];
      if (u < 0) {
        return ids[i];
      }
    }
    return ids[k - 1];
  }

  // ---------------------------------------------------------------- training

  /** The builtin model has no adapters: RSFT trains all of it. */
  @Override
  public boolean trainsAllWeights() {
    return true;
  }

  /**
   * One epoch of supervised fine-tuning: the examples in an order shuffled by {@code seed}, in
   * minibatches of {@code minibatch}; the loss is the mean NLL of completion tokens only (callers keep
   * the completion's trailing '\n' so the model learns to stop). An empty list changes nothing.
   */
  public TrainStats sft(List<SftExample> examples, int minibatch, float learningRate, long seed) {
    return sft(examples, minibatch, learningRate, seed, (step, loss) -> { });
  }

  /** Like {@link #sft(List, int, float, long)}, reporting each minibatch step (an activity's checkpoint). */
  @Override
  public TrainStats sft(List<SftExample> examples, int minibatch, float learningRate, long seed,
      Progress progress) {
    if (minibatch < 1) {
      throw new IllegalArgumentException("minibatch must be >= 1: " + minibatch);
    }
    if (examples.isEmpty()) {
      return TrainStats.NONE;
    }
    int[] order = shuffled(examples.size(), seed);
    List<List<Row>> batches = new ArrayList<>();
    for (int from = 0; from < order.length; from += minibatch) {
      List<Row> batch = new ArrayList<>();
      for (int i = from; i < Math.min(order.length, from + minibatch); i++) {
        SftExample ex = examples.get(order[i]);
        batch.add(sftRow(ex, config.contextLength()));
      }
      batches.add(batch);
    }
    return train(batches, step -> learningRate, progress); // constant: RSFT rounds are short
  }

  /**
   * Next-token pretraining: {@code steps} steps, each on {@code batch} documents drawn by {@code seed}
   * (a document longer than the context contributes a random window of it); every token counts.
   * {@code lr} is the peak of a warm-up then cosine-decay schedule over the call.
   */
  public TrainStats pretrain(List<String> documents, int steps, int batch, float lr, long seed) {
    return pretrain(documents, steps, batch, lr, seed, (step, loss) -> { });
  }

  /**
   * Like {@link #pretrain(List, int, int, float, long)}, reporting each step (a Temporal activity
   * heartbeats from here; the schedule must see all {@code steps} at once, so no chunking).
   */
  public TrainStats pretrain(List<String> documents, int steps, int batch, float lr, long seed,
      Progress progress) {
    if (batch < 1) {
      throw new IllegalArgumentException("batch must be >= 1: " + batch);
    }
    List<int[]> docs = new ArrayList<>();
    for (String d : documents) {
      int[] ids = CharTokenizer.encode(d);
      if (ids.length >= 2) {
        docs.add(ids);
      }
    }
    if (docs.isEmpty() || steps <= 0) {
      return TrainStats.NONE;
    }
    SplittableRandom rng = new SplittableRandom(seed);
    int window = config.contextLength() + 1;
    List<List<Row>> batches = new ArrayList<>();
    for (int s = 0; s < steps; s++) {
      List<Row> rows = new ArrayList<>();
      for (int b = 0; b < batch; b++) {
        int[] doc = docs.get(rng.nextInt(docs.size()));
        int start = doc.length > window ? rng.nextInt(doc.length - window + 1) : 0;
        int[] piece = Arrays.copyOfRange(doc, start, Math.min(doc.length, start + window));
        float[] weights = new float[piece.length - 1];
        Arrays.fill(weights, 1f);
        rows.add(new Row(Arrays.copyOf(piece, piece.length - 1),
            Arrays.copyOfRange(piece, 1, piece.length), weights));
      }
      batches.add(rows);
    }
    return train(batches, step -> scheduledLr(lr, step, steps), progress);
  }

  /**
   * Pretraining's learning rate at {@code step} of {@code total}: linear warm-up over the first 5%
   * (so early AdamW steps, with tiny second-moment estimates, stay small), then cosine decay to 10%
   * of the peak (the decay is what turns a noisy plateau into exact answers).
   */
  static float scheduledLr(float peak, int step, int total) {
    int warmup = Math.max(1, total / 20);
    if (step < warmup) {
      return peak * (step + 1) / warmup;
    }
    double progress = (double) (step - warmup) / Math.max(1, total - warmup);
    return (float) (peak * (0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI * progress))));
  }

  private TrainStats train(List<List<Row>> batches, java.util.function.IntToDoubleFunction lr,
      Progress progress) {
    synchronized (this) {
      double lossSum = 0;
      long tokens = 0;
      int steps = 0;
      for (int i = 0; i < batches.size(); i++) {
        Batch b = Batch.of(batches.get(i));
        if (b.weightSum == 0) {
          continue; // nothing to learn from (e.g. empty completions)
        }
        float loss = step(b, (float) lr.applyAsDouble(i));
        progress.onStep(i + 1, loss);
        lossSum += (double) loss * b.weightSum;
        tokens += (long) b.weightSum;
        steps++;
      }
      return steps == 0 ? TrainStats.NONE : new TrainStats(lossSum / tokens, steps, tokens);
    }
  }

  /** Forward, backward and one AdamW update on one padded batch; returns the batch's mean NLL. */
  private float step(Batch b, float lr) {
    try (NDManager sub = manager.newSubManager();
        NDScope scope = new NDScope()) {
      float loss;
      try (Backprop collector = new Backprop()) {
        NDArray nll = meanNll(sub, b);
        collector.backward(nll);
        loss = nll.getFloat();
      }
      optimizer.step(gpt.weights(), lr);
      return loss;
    }
  }

  /** Weighted mean of -log p(target) over the batch: the training loss. */
  private NDArray meanNll(NDManager sub, Batch b) {
    Shape shape = new Shape(b.rows, b.width);
    NDArray tokens = sub.create(b.inputs, shape);
    NDArray targets = sub.create(b.targets, shape);
    NDArray weights = sub.create(b.weights, shape);
    NDArray logProbs = gpt.logits(tokens).logSoftmax(-1);
    NDArray picked = logProbs.mul(targets.oneHot(config.vocabSize())).sum(new int[] {-1});
    return picked.mul(weights).sum().neg().div(Scalars.of(picked, b.weightSum));
  }

  /** Total log-probability (nats) the model gives {@code completion} after {@code prompt}. */
  public synchronized double logProb(String prompt, String completion) {
    Batch b = Batch.of(List.of(sftRow(prompt, completion, config.contextLength())));
    if (b.weightSum == 0) {
      return 0;
    }
    try (NDManager sub = manager.newSubManager();
        NDScope scope = new NDScope()) {
      return -meanNll(sub, b).getFloat() * b.weightSum;
    }
  }

  /** Logits at every position of {@code text} (at most contextLength characters): [T][V]. */
  public synchronized float[][] logits(String text) {
    int[] ids = CharTokenizer.encode(text);
    if (ids.length == 0 || ids.length > config.contextLength()) {
      throw new IllegalArgumentException("text must have 1.." + config.contextLength() + " chars");
    }
    float[] flat;
    try (NDManager sub = manager.newSubManager();
        NDScope scope = new NDScope()) {
      flat = gpt.logits(sub.create(ids, new Shape(1, ids.length))).toFloatArray();
    }
    float[][] out = new float[ids.length][];
    for (int t = 0; t < ids.length; t++) {
      out[t] = Arrays.copyOfRange(flat, t * config.vocabSize(), (t + 1) * config.vocabSize());
    }
    return out;
  }

  // ---------------------------------------------------------------- batches

  /** One training sequence: inputs, next-token targets and a loss weight per target. */
  record Row(int[] inputs, int[] targets, float[] weights) {}

  /**
   * The training row of one SFT example: weight 1 on completion targets, 0 on prompt targets. If
   * prompt + completion is longer than the context, the left end is dropped (the prompt first).
   */
  static Row sftRow(String prompt, String completion, int contextLength) {
    return sftRow(new SftExample(prompt, completion), contextLength);
  }

  /** Characters of every part in order; a target is weighted iff its character is in a trained part. */
  static Row sftRow(SftExample ex, int contextLength) {
    List<Integer> seqList = new ArrayList<>();
    List<Boolean> trainedList = new ArrayList<>();
    for (int part = 0; part < ex.parts().size(); part++) {
      int[] t = part == 0 ? promptTokens(ex.parts().get(0)) : CharTokenizer.encode(ex.parts().get(part));
      for (int id : t) {
        seqList.add(id);
        trainedList.add(SftExample.trained(part));
      }
    }
    int[] seq = seqList.stream().mapToInt(Integer::intValue).toArray();
    int start = Math.max(0, seq.length - (contextLength + 1));
    int n = seq.length - start - 1;
    int[] inputs = Arrays.copyOfRange(seq, start, start + n);
    int[] targets = Arrays.copyOfRange(seq, start + 1, start + 1 + n);
    float[] weights = new float[n];
    for (int i = 0; i < n; i++) {
      // target i is seq[start + 1 + i]: trained iff the model wrote that character
      weights[i] = trainedList.get(start + 1 + i) ? 1f : 0f;
    }
    return new Row(inputs, targets, weights);
  }

  private static int[] promptTokens(String prompt) {
    return CharTokenizer.encode(prompt.isEmpty() ? "\n" : prompt);
  }

  /** Rows right-padded to a common width, flattened for NDArray creation. */
  private static final class Batch {
    final int rows;
    final int width;
    final int[] inputs;
    final int[] targets;
    final float[] weights;
    final float weightSum;

    private Batch(int rows, int width) {
      this.rows = rows;
      this.width = width;
      this.inputs = new int[rows * width];
      this.targets = new int[rows * width];
      this.weights = new float[rows * width];
      this.weightSum = 0;
    }

    private Batch(Batch b, float weightSum) {
      this.rows = b.rows;
      this.width = b.width;
      this.inputs = b.inputs;
      this.targets = b.targets;
      this.weights = b.weights;
      this.weightSum = weightSum;
    }

    static Batch of(List<Row> rows) {
      int width = 1;
      for (Row r : rows) {
        width = Math.max(width, r.inputs().length);
      }
      Batch b = new Batch(rows.size(), width);
      float sum = 0;
      for (int i = 0; i < rows.size(); i++) {
        Row r = rows.get(i);
        System.arraycopy(r.inputs(), 0, b.inputs, i * width, r.inputs().length);
        System.arraycopy(r.targets(), 0, b.targets, i * width, r.targets().length);
        System.arraycopy(r.weights(), 0, b.weights, i * width, r.weights().length);
        for (float w : r.weights()) {
          sum += w;
        }
      }
      return new Batch(b, sum);
    }
  }

  /** 0..n-1 in a Fisher-Yates order drawn from SplittableRandom(seed): every SFT epoch's order. */
  public static int[] shuffled(int n, long seed) {
    int[] order = new int[n];
    Arrays.setAll(order, i -> i);
    SplittableRandom rng = new SplittableRandom(seed);
    for (int i = n - 1; i > 0; i--) {
      int j = rng.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    return order;
  }

  private static void checkVocab(ModelConfig config) {
    if (config.vocabSize() != CharTokenizer.VOCAB_SIZE) {
      throw new IllegalArgumentException("vocabSize must be CharTokenizer.VOCAB_SIZE ("
          + CharTokenizer.VOCAB_SIZE + "): " + config.vocabSize());
    }
  }

  @Override
  public synchronized void close() {
    optimizer.close();
    manager.close();
  }
}
