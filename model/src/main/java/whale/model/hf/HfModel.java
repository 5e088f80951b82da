package whale.model.hf;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.ndarray.types.DataType;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.ModelLimits;
import whale.model.EngineSettings;
import whale.model.Generator;
import whale.model.Policy;
import whale.model.LanguageModel;
import whale.model.SamplingParams;
import whale.model.SftExample;
import whale.model.TrainStats;

/**
 * A Hugging Face model directory as a whale {@link Generator}: its decoder, tokenizer and special
 * tokens. A completion ends at EOS (not part of the text), after the first of {@code stopStrings}
 * (kept, as whale's built-in model keeps its '\n'), or at the request's token limit.
 *
 * <p>A prompt longer than the context loses its left end, keeping room for the new tokens.
 *
 * <p>Every sampling and training call runs on the model's own thread, one at a time: libtorch's
 * tensors then come from one malloc arena, which reuses what the last call freed. From the callers'
 * threads (a batch thread per episode run, activity threads) each arena grew to a batch's working
 * set, and glibc keeps up to 8 per core: sampling SmolLM2-135M from 8 threads ended at 9.4 GB
 * resident where one thread stays at 1.6 GB ({@code bench/README.md}, memory).
 */
public final class HfModel implements Policy {
  static {
    EngineSettings.apply(); // before the engine starts: pins, offline, threads (one place for both models)
  }

  /** whale's Generator contract: a completion is one line. */
  public static final List<String> LINE = List.of("\n");

  /**
   * Where the model lives and in what precision: {@code model.dtype} (float32, or float16 for the
   * frozen base under LoRA) and {@code model.device} (cpu or cuda) of the spec. The spec's own
   * enums ({@code whale.workflows.Dtype} and {@code Device}) have the same spellings: the workflows
   * module sees no model module, so each side has its closed set, HfPolicy maps one to the other
   * by spelling and a test keeps them equal.
   */
  public record Placement(Placement.Dtype dtype, Placement.Device device) {
    public static final Placement CPU_FLOAT32 = new Placement(Dtype.FLOAT32, Device.CPU);

    /** The base weights' type. */
    public enum Dtype {
      FLOAT32("float32", DataType.FLOAT32),
      FLOAT16("float16", DataType.FLOAT16);

      private final String spelling;
      private final DataType dataType;

      Dtype(String spelling, DataType dataType) {
        this.spelling = spelling;
        this.dataType = dataType;
      }

      /** As spec files, checkpoints and the command line write it. */
      public String spelling() {
        return spelling;
      }

      @Override
      public String toString() {
        return spelling;
      }

      /** {@code spelling} (null: float32); an error naming model.dtype otherwise. */
      public static Dtype of(String spelling) {
        return spelling == null ? FLOAT32 : find(values(), spelling, "model.dtype");
      }
    }

    /** Where the model runs. */
    public enum Device {
      CPU("cpu"),
      CUDA("cuda");

      private final String spelling;

      Device(String spelling) {
        this.spelling = spelling;
      }

      /** As spec files, checkpoints and the command line write it. */
      public String spelling() {
        return spelling;
      }

      @Override
      public String toString() {
        return spelling;
      }

      /** {@code spelling} (null: cpu); an error naming model.device otherwise. */
      public static Device of(String spelling) {
        return spelling == null ? CPU : find(values(), spelling, "model.device");
      }
    }

    public Placement {
      java.util.Objects.requireNonNull(dtype, "dtype");
      java.util.Objects.requireNonNull(device, "device");
    }

    /** The placement spelled {@code dtype} and {@code device} (null: float32, cpu). */
    public static Placement of(String dtype, String device) {
      return new Placement(Dtype.of(dtype), Device.of(device));
    }

    private static <E extends Enum<E>> E find(E[] values, String spelling, String field) {
      for (E e : values) {
        if (e.toString().equals(spelling)) {
          return e;
        }
      }
      throw new IllegalArgumentException(field + ": " + values[0] + " or " + values[1] + ", not \""
          + spelling + "\"");
    }

    DataType baseType() {
      return dtype.dataType;
    }

    boolean cuda() {
      return device == Device.CUDA;
    }
  }

  private final Path dir;
  private final Placement placement;
  private final NDManager manager;
  private final LlamaDecoder decoder;
  private final HfTokenizer tokenizer;
  private final List<String> stopStrings;
  private final java.util.concurrent.ExecutorService thread;
  private volatile Thread modelThread;
  private volatile SftTrainer trainer;

  private HfModel(Path dir, Placement placement, NDManager manager, LlamaDecoder decoder,
      HfTokenizer tokenizer, List<String> stopStrings) {
    this.dir = dir;
    this.placement = placement;
    this.manager = manager;
    this.decoder = decoder;
    this.tokenizer = tokenizer;
    this.stopStrings = List.copyOf(stopStrings);
    this.thread = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "whale-model-" + dir.getFileName());
      t.setDaemon(true);
      modelThread = t;
      return t;
    });
  }

  /** A call of the model: on its own thread, after every earlier call (directly when already there). */
  private <T> T onModelThread(java.util.concurrent.Callable<T> call) {
    if (Thread.currentThread() == modelThread) {
      try {
        return call.call();
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Exception e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    }
    java.util.concurrent.Future<T> f = thread.submit(call);
    try {
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(false); // the model finishes the call it is in; a queued one is dropped
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the model", e);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new java.util.concurrent.CompletionException(c);
    }
  }

  private void onModelThread(Runnable call) {
    onModelThread(() -> {
      call.run();
      return null;
    });
  }

  /** Loads {@code dir}; completions stop at EOS or after any of {@code stopStrings}. */
  public static HfModel load(Path dir, List<String> stopStrings) throws IOException {
    return load(dir, stopStrings, Placement.CPU_FLOAT32);
  }

  /**
   * As {@link #load(Path, List)}, on {@code placement}'s device and precision. On cuda, a process
   * whose engine sees no GPU gets a {@link CudaCheck.GpuUnavailableException} naming what is
   * missing, before any weight is read.
   */
  public static HfModel load(Path dir, List<String> stopStrings, Placement placement)
      throws IOException {
    if (placement.cuda()) {
      CudaCheck.require();
    }
    NDManager manager = NDManager.newBaseManager(placement.cuda() ? Device.gpu() : Device.cpu());
    LlamaDecoder decoder = null;
    try {
      decoder = LlamaDecoder.loadShared(dir, manager, placement.baseType());
      return new HfModel(dir, placement, manager, decoder, HfTokenizer.load(dir), stopStrings);
    } catch (IOException | RuntimeException e) {
      manager.close();
      if (decoder != null) {
        decoder.release();
      }
      throw e;
    }
  }

  public Path directory() {
    return dir;
  }

  @Override
  public long residentBytes() {
    return decoder.ownedBytes();
  }

  public Placement placement() {
    return placement;
  }

  public LlamaDecoder decoder() {
    return decoder;
  }

  public HfTokenizer tokenizer() {
    return tokenizer;
  }

  NDManager manager() {
    return manager;
  }

  /** Prompt ids as the model sees them ({@link HfTokenizer#promptIds}). */
  public int[] promptIds(String prompt) {
    return tokenizer.promptIds(prompt);
  }

  private whale.chat.ChatTemplate chatTemplate;

  /** The checkpoint's own chat template (chat_template.jinja or tokenizer_config.json), read once. */
  @Override
  public synchronized whale.chat.ChatTemplate chatTemplate() {
    if (chatTemplate == null) {
      chatTemplate = whale.chat.ChatTemplate.ofOrMissing(dir);
    }
    return chatTemplate;
  }

  @Override
  public ModelLimits limits() {
    return ModelLimits.forContext(decoder.config().maxPositions());
  }

  @Override
  public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
    // the sampler draws a batch at one temperature: a chat turn's own temperature is its own batch
    return Generator.byTemperature(requests, params, (rows, p) -> generate(rows, Sampling.of(p)));
  }

  /** Completions in request order; the same request and seed give the same completion in any batch. */
  public List<Completion> generate(List<GenerationRequest> requests, Sampling sampling) {
    return onModelThread(() -> generateHere(requests, sampling));
  }

  private List<Completion> generateHere(List<GenerationRequest> requests, Sampling sampling) {
    int maxPos = decoder.config().maxPositions();
    List<KvSampler.Row> rows = new ArrayList<>();
    List<Integer> sampled = new ArrayList<>(); // request index of each row
    int[] seen = new int[requests.size()];
    String[] error = new String[requests.size()];
    for (int i = 0; i < requests.size(); i++) {
      GenerationRequest r = requests.get(i);
      int maxNew = Math.min(Math.max(0, r.maxNewTokens()), maxPos - 1);
      int[] ids = promptIds(r.prompt());
      if (ids.length + maxNew > maxPos) {
        if (r.chat()) {
          // cutting a conversation's start would drop its system prompt: the call fails instead
          error[i] = "the conversation's " + ids.length + " tokens and " + maxNew + " new tokens exceed "
              + "the model's context of " + maxPos + " (max_position_embeddings)";
          seen[i] = ids.length;
          continue;
        }
        ids = Arrays.copyOfRange(ids, ids.length + maxNew - maxPos, ids.length);
      }
      seen[i] = ids.length;
      sampled.add(i);
      rows.add(new KvSampler.Row(ids, r.seed(), maxNew));
    }
    Set<Integer> eos = new LinkedHashSet<>(tokenizer.eosIds());
    String[] text = new String[rows.size()]; // by row, as the stop callback sees them
    KvSampler.Stop stop = stopStrings.isEmpty() ? KvSampler.Stop.NEVER : (row, gen, count) -> {
      if (requests.get(sampled.get(row)).chat()) {
        return false; // a chat turn ends at EOS, not at a line stop
      }
      String t = tokenizer.decode(Arrays.copyOf(gen, count));
      for (String s : stopStrings) {
        int at = t.indexOf(s);
        if (at >= 0) {
          text[row] = t.substring(0, at + s.length());
          return true;
        }
      }
      return false;
    };
    int[][] out = rows.isEmpty() ? new int[0][]
        : KvSampler.sample(decoder, manager, rows, sampling, eos, tokenizer.padId(), stop);
    Completion[] completions = new Completion[requests.size()];
    for (int i = 0; i < requests.size(); i++) {
      if (error[i] != null) {
        completions[i] = new Completion("", seen[i], 0, error[i]);
      }
    }
    for (int row = 0; row < out.length; row++) {
      int i = sampled.get(row);
      int[] ids = out[row];
      if (text[row] == null) {
        int n = ids.length > 0 && eos.contains(ids[ids.length - 1]) ? ids.length - 1 : ids.length;
        text[row] = tokenizer.decode(Arrays.copyOf(ids, n));
      }
      completions[i] = new Completion(text[row], seen[i], ids.length);
    }
    return List.of(completions);
  }

  /**
   * log p(completion[i] | prompt, completion[0..i)) for each completion token, teacher-forced in one
   * forward pass: what a server's reported log-probabilities of the same tokens must match.
   */
  public double[] tokenLogProbs(int[] prompt, int[] completion) {
    if (prompt.length == 0 || completion.length == 0
        || prompt.length + completion.length > decoder.config().maxPositions()) {
      throw new IllegalArgumentException("need a prompt and a completion within the context: "
          + prompt.length + " + " + completion.length + " tokens");
    }
    return onModelThread(() -> {
      int n = prompt.length + completion.length - 1; // the last token predicts nothing asked for
      int[] input = new int[n];
      System.arraycopy(prompt, 0, input, 0, prompt.length);
      System.arraycopy(completion, 0, input, prompt.length, completion.length - 1);
      int[] positions = new int[n];
      for (int i = 0; i < n; i++) {
        positions[i] = i;
      }
      try (NDManager sub = manager.newSubManager()) {
        NDArray hidden = decoder.hidden(sub.create(input, new Shape(1, n)),
            sub.create(positions, new Shape(1, n)), null, null);
        // only the positions that predict a completion token go through the output layer
        NDArray last = hidden.get(":, " + (prompt.length - 1) + ":, :").reshape(completion.length, -1);
        float[] lp = decoder.logits(last).logSoftmax(-1).toType(DataType.FLOAT32, false)
            .toFloatArray();
        int vocab = lp.length / completion.length;
        double[] out = new double[completion.length];
        for (int i = 0; i < out.length; i++) {
          if (completion[i] < 0 || completion[i] >= vocab) {
            throw new IllegalArgumentException("token id " + completion[i] + " outside the vocabulary of "
                + vocab);
          }
          out[i] = lp[i * vocab + completion[i]];
        }
        return out;
      }
    });
  }

  /** The new token ids of each prompt (EOS kept at the end when reached), for parity with transformers. */
  public int[][] generateIds(List<KvSampler.Row> rows, Sampling sampling) {
    return onModelThread(() -> KvSampler.sample(decoder, manager, rows, sampling,
        new LinkedHashSet<>(tokenizer.eosIds()), tokenizer.padId(), KvSampler.Stop.NEVER));
  }

  // ---------------------------------------------------------------- training

  /** LoRA settings: adapters of {@code rank} on each layer's {@code targets}, scaled alpha / rank. */
  public record LoraSpec(int rank, double alpha, List<String> targets) {}

  /** Fine-tune every weight from now on. */
  public void trainFull() {
    onModelThread(() -> {
      checkNotTraining();
      if (decoder.baseType() != DataType.FLOAT32) {
        throw new IllegalStateException("model.dtype float16 holds a frozen base for rsft.finetune "
            + "lora; full fine-tuning trains every weight, and trainable parameters and AdamW "
            + "moments stay float32");
      }
      trainer = SftTrainer.full(decoder, manager);
    });
  }

  /** Whether it fine-tunes every weight (no adapters): weights, gradients and moments its own. */
  @Override
  public boolean trainsAllWeights() {
    return trainer != null && decoder.adapters().isEmpty();
  }

  /** Fine-tune fresh LoRA adapters (seeded A, zero B) with the base frozen from now on. */
  public void trainLora(LoraSpec spec, long seed) {
    onModelThread(() -> {
      checkNotTraining();
      LoraAdapters.attachFresh(decoder, manager, spec.rank(), spec.alpha(), spec.targets(), seed);
      trainer = SftTrainer.lora(decoder, manager);
    });
  }

  private void checkNotTraining() {
    if (trainer != null) {
      throw new IllegalStateException("training mode already chosen for " + dir);
    }
  }

  /** The example as token ids: the prompt as sampling sees it, the completion continuing it. */
  public SftTrainer.Example example(SftExample ex) {
    // each part is tokenized on its own, as the model saw it: the prompt alone, then its own tokens
    List<int[]> tokens = new ArrayList<>();
    int n = 0;
    for (int part = 0; part < ex.parts().size(); part++) {
      int[] t = ex.sampledIds(part) != null ? ex.sampledIds(part) // exactly what the server sampled
          : part == 0 ? promptIds(ex.parts().get(0)) : tokenizer.encodeContinuation(ex.parts().get(part));
      tokens.add(t);
      n += t.length;
    }
    int[] ids = new int[n];
    boolean[] trained = new boolean[n];
    int at = 0;
    for (int part = 0; part < tokens.size(); part++) {
      int[] t = tokens.get(part);
      System.arraycopy(t, 0, ids, at, t.length);
      Arrays.fill(trained, at, at + t.length, SftExample.trained(part));
      at += t.length;
    }
    return new SftTrainer.Example(ids, trained);
  }

  /**
   * One epoch of supervised fine-tuning, as LanguageModel.sft: the examples in an order shuffled by
   * {@code seed}, in minibatches of {@code minibatch}, loss on completion tokens only, constant
   * learning rate. Call {@link #trainFull} or {@link #trainLora} first.
   */
  public TrainStats sft(List<SftExample> examples, int minibatch, float lr, long seed) {
    return sft(examples, minibatch, minibatch, lr, seed);
  }

  /** As above; {@code progress} hears of the epoch once, at its end (training runs on the model's thread). */
  @Override
  public TrainStats sft(List<SftExample> examples, int minibatch, float lr, long seed, Progress progress) {
    TrainStats stats = sft(examples, minibatch, lr, seed);
    progress.onStep(stats.steps(), (float) stats.meanLoss()); // an abandoned step stops here
    return stats;
  }

  /** As above, each minibatch's gradients accumulated over micro-batches of {@code microRows}. */
  public TrainStats sft(List<SftExample> examples, int minibatch, int microRows, float lr,
      long seed) {
    return onModelThread(() -> sftHere(examples, minibatch, microRows, lr, seed));
  }

  private TrainStats sftHere(List<SftExample> examples, int minibatch, int microRows, float lr,
      long seed) {
    if (trainer == null) {
      throw new IllegalStateException("call trainFull() or trainLora() before sft()");
    }
    if (minibatch < 1) {
      throw new IllegalArgumentException("minibatch must be >= 1: " + minibatch);
    }
    int[] order = LanguageModel.shuffled(examples.size(), seed);
    double lossSum = 0;
    long tokens = 0;
    int steps = 0;
    for (int from = 0; from < order.length; from += minibatch) {
      List<SftTrainer.Example> batch = new ArrayList<>();
      long weight = 0;
      for (int i = from; i < Math.min(order.length, from + minibatch); i++) {
        SftTrainer.Example e = example(examples.get(order[i]));
        batch.add(e);
        weight += e.trainedTokens();
      }
      if (weight == 0) {
        continue; // nothing to learn from (e.g. empty completions)
      }
      float loss = trainer.step(batch, lr, microRows);
      lossSum += (double) loss * weight;
      tokens += weight;
      steps++;
    }
    return steps == 0 ? TrainStats.NONE : new TrainStats(lossSum / tokens, steps, tokens);
  }

  /** Continues with a trainer rebuilt from a checkpoint (adapters already attached). */
  void resumeTraining(SftTrainer t) {
    onModelThread(() -> {
      checkNotTraining();
      trainer = t;
    });
  }

  /**
   * Writes a training checkpoint to {@code out}: the PEFT adapter (LoRA) or the float32 weights
   * (full), AdamW's state and what the run needs to resume. See {@link HfCheckpoint}.
   */
  public void save(Path out) throws IOException {
    try {
      onModelThread(() -> {
        if (trainer == null) {
          throw new IllegalStateException("nothing to checkpoint: no training mode chosen for " + dir);
        }
        HfCheckpoint.save(this, trainer, !decoder.adapters().isEmpty(), out);
        return null;
      });
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw e;
    }
  }

  /** The model and optimizer state {@link #save} wrote, ready to continue training. */
  public static HfModel resume(Path checkpoint, List<String> stopStrings) throws IOException {
    return HfCheckpoint.load(checkpoint, stopStrings, true);
  }

  /**
   * The model {@link #save} wrote, to sample from or export: weights and adapters without the
   * trainer and its optimizer state (a full fine-tune's resumed AdamW moments doubled an
   * evaluation's memory).
   */
  public static HfModel open(Path checkpoint, List<String> stopStrings) throws IOException {
    return HfCheckpoint.load(checkpoint, stopStrings, false);
  }

  /** The trainer chosen by trainFull/trainLora, or null. */
  public SftTrainer trainer() {
    return trainer;
  }

  @Override
  public void close() {
    if (thread.isShutdown()) {
      return;
    }
    onModelThread(() -> {
      if (trainer != null) {
        trainer.close();
      }
      tokenizer.close();
      manager.close();
      decoder.release();
    });
    thread.shutdown();
  }
}
