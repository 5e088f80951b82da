package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import whale.model.AdamW;
import whale.model.Scalars;

/**
 * Supervised fine-tuning of a {@link LlamaDecoder} with whale's masked loss: the mean negative
 * log-likelihood of completion tokens only (prompt tokens are context), over every completion token
 * of the minibatch. Either every weight trains ({@link #full}) or only the LoRA adapters, the base
 * frozen ({@link #lora}); trainable arrays and AdamW moments are float32.
 */
public final class SftTrainer implements AutoCloseable {
  /** One example as token ids: the loss covers {@code completion} only. */
  /**
   * Token ids and, per token, whether it is a target to learn (the model's own tokens).
   */
  public record Example(int[] ids, boolean[] trained) {
    public Example {
      if (ids.length != trained.length) {
        throw new IllegalArgumentException(ids.length + " ids but " + trained.length + " trained flags");
      }
    }

    /** Tokens the loss covers. */
    public int trainedTokens() {
      int n = 0;
      for (boolean t : trained) {
        n += t ? 1 : 0;
      }
      return n;
    }

    /** A prompt and its completion: the loss on the completion only. */
    public static Example of(int[] prompt, int[] completion) {
      int[] ids = Arrays.copyOf(prompt, prompt.length + completion.length);
      System.arraycopy(completion, 0, ids, prompt.length, completion.length);
      boolean[] trained = new boolean[ids.length];
      Arrays.fill(trained, prompt.length, ids.length, true);
      return new Example(ids, trained);
    }
  }

  private final LlamaDecoder decoder;
  private final NDManager manager;
  private final LinkedHashMap<String, NDArray> trainable;
  private final AdamW optimizer;
  private boolean checkpointing;

  private SftTrainer(LlamaDecoder decoder, NDManager manager, LinkedHashMap<String, NDArray> trainable) {
    this.decoder = decoder;
    this.manager = manager;
    this.trainable = trainable;
    Set<String> decayed = new HashSet<>();
    for (Map.Entry<String, NDArray> e : trainable.entrySet()) {
      e.getValue().setRequiresGradient(true);
      if (e.getValue().getShape().dimension() >= 2) {
        decayed.add(e.getKey()); // matrices and embeddings, not norms or biases (as TinyGpt)
      }
    }
    this.optimizer = new AdamW(trainable, decayed, manager);
  }

  /** Full fine-tuning: every weight of the decoder trains. */
  public static SftTrainer full(LlamaDecoder decoder, NDManager manager) {
    if (decoder.baseType() != DataType.FLOAT32) {
      throw new IllegalArgumentException("a " + decoder.baseType() + " base cannot be fine-tuned in"
          + " full: trainable parameters and AdamW moments are float32 (train LoRA adapters)");
    }
    decoder.ownWeights(manager); // trained in place: never the weights other models share
    SftTrainer trainer = new SftTrainer(decoder, manager, new LinkedHashMap<>(decoder.weights()));
    trainer.checkpointing = FULL_CHECKPOINTING;
    return trainer;
  }

  /**
   * Whether a full fine-tune recomputes activations in its backward pass
   * ({@code whale.hf.fullCheckpointing}, default true): on SmolLM2-135M its weights, gradients and
   * AdamW moments are 2.2 GB, and keeping a micro-batch's activations raised a step's peak by
   * 0.85 GB more (bench/README.md, memory). LoRA keeps them: its frozen base leaves the room, and
   * recomputing made a step 27-38 % slower.
   */
  static final boolean FULL_CHECKPOINTING =
      Boolean.parseBoolean(System.getProperty("whale.hf.fullCheckpointing", "true"));

  /** Recompute each layer's activations in the backward pass instead of keeping them. */
  public SftTrainer activationCheckpointing(boolean on) {
    checkpointing = on;
    return this;
  }

  /** LoRA: only the attached adapters train; the base weights stay frozen. */
  public static SftTrainer lora(LlamaDecoder decoder, NDManager manager) {
    if (decoder.adapters().isEmpty()) {
      throw new IllegalStateException("no LoRA adapters attached to train");
    }
    return new SftTrainer(decoder, manager, LoraAdapters.parameters(decoder));
  }

  /** Trainable arrays by name (Hugging Face names, or PEFT names for adapters). */
  public Map<String, NDArray> trainable() {
    return java.util.Collections.unmodifiableMap(trainable);
  }

  /** The masked loss of one minibatch, without gradients. */
  public float loss(List<Example> batch) {
    synchronized (this) {
      try (NDManager sub = manager.newSubManager();
          NDScope scope = new NDScope()) {
        Batch b = Batch.of(batch, decoder.config().maxPositions());
        if (b.weightSum == 0) {
          throw new IllegalArgumentException("minibatch has no completion token to learn from");
        }
        return maskedNll(sub, b).getFloat();
      }
    }
  }

  /** The loss and each trainable array's gradient L2 norm for one minibatch; changes no weight. */
  public Map<String, Double> gradientNorms(List<Example> batch, float[] lossOut) {
    return gradientNorms(batch, batch.size(), lossOut);
  }

  /** As {@link #gradientNorms(List, float[])}, accumulating over micro-batches of {@code microRows}. */
  public Map<String, Double> gradientNorms(List<Example> batch, int microRows, float[] lossOut) {
    synchronized (this) {
      try (NDManager sub = manager.newSubManager();
          NDScope scope = new NDScope()) {
        backward(sub, batch, microRows, lossOut);
        Map<String, Double> out = new LinkedHashMap<>();
        for (Map.Entry<String, NDArray> e : trainable.entrySet()) {
          NDArray g = e.getValue().getGradient();
          out.put(e.getKey(), (double) g.norm().getFloat());
          g.subi(g); // zero in place, as AdamW does: the .grad buffer is shared with this view
        }
        return out;
      }
    }
  }

  /**
   * Most tokens (rows times the padded width) of one micro-batch ({@code whale.hf.sftMicroTokens},
   * default 512): autograd keeps every layer's activations of a micro-batch until its backward
   * pass, about 1 MB per token over SmolLM2-135M's 30 layers, more for long rows (attention).
   */
  static final int MICRO_TOKENS = Integer.getInteger("whale.hf.sftMicroTokens", 512);

  /** Forward, backward and one AdamW update on one minibatch; returns its loss before the update. */
  public float step(List<Example> batch, float lr) {
    return step(batch, lr, batch.size());
  }

  /**
   * One AdamW update from gradients accumulated over micro-batches of at most {@code microRows}
   * rows, so a minibatch of long sequences fits in memory; the update is that of the whole
   * minibatch (each micro-batch's loss is weighted by its share of the completion tokens).
   */
  public float step(List<Example> batch, float lr, int microRows) {
    synchronized (this) {
      try (NDManager sub = manager.newSubManager();
          NDScope scope = new NDScope()) {
        float[] loss = new float[1];
        backward(sub, batch, microRows, loss);
        optimizer.step(trainable, lr);
        return loss[0];
      }
    }
  }

  AdamW optimizer() {
    return optimizer;
  }

  public long optimizerSteps() {
    return optimizer.stepCount();
  }

  /**
   * The end of the micro-batch that starts at {@code from}: at most {@code microRows} rows and,
   * padded to the longest, at most {@code maxTokens} tokens (always at least one row).
   */
  static int microEnd(List<Example> batch, int from, int microRows, int context, int maxTokens) {
    int width = 0;
    int to = from;
    while (to < batch.size() && to - from < microRows) {
      int w = Math.max(width, Math.min(context, batch.get(to).ids().length - 1));
      if (to > from && (long) (to - from + 1) * w > maxTokens) {
        break;
      }
      width = w;
      to++;
    }
    return to;
  }

  private void backward(NDManager sub, List<Example> batch, int microRows, float[] lossOut) {
    if (microRows < 1) {
      throw new IllegalArgumentException("microRows must be >= 1: " + microRows);
    }
    int context = decoder.config().maxPositions();
    List<Batch> micro = new java.util.ArrayList<>();
    float total = 0;
    for (int from = 0; from < batch.size(); ) {
      int to = microEnd(batch, from, microRows, context, MICRO_TOKENS);
      Batch b = Batch.of(batch.subList(from, to), context);
      if (b.weightSum > 0) {
        micro.add(b);
        total += b.weightSum;
      }
      from = to;
    }
    if (total == 0) {
      throw new IllegalArgumentException("minibatch has no completion token to learn from");
    }
    double loss = 0;
    for (Batch b : micro) {
      // gradients add up across collectors (see AdamW), so per micro-batch: sum of NLL / total
      float share = b.weightSum / total;
      if (checkpointing) {
        try (NDManager m = sub.newSubManager()) {
          loss += decoder.backwardCheckpointed(tokens(m, b), positions(m, b), keyMask(m, b),
              hidden -> {
                NDArray nll = maskedNll(m, b, hidden);
                return nll.mul(Scalars.of(nll, share));
              });
        }
        continue;
      }
      try (NDManager m = sub.newSubManager();
          whale.model.Backprop collector = new whale.model.Backprop()) {
        NDArray nll = maskedNll(m, b);
        NDArray part = nll.mul(Scalars.of(nll, share));
        collector.backward(part);
        loss += part.getFloat();
      }
    }
    lossOut[0] = (float) loss;
  }

  private static NDArray tokens(NDManager m, Batch b) {
    return m.create(b.inputs, new Shape(b.rows, b.width));
  }

  private static NDArray positions(NDManager m, Batch b) {
    return m.create(b.positions, new Shape(b.rows, b.width));
  }

  private static NDArray keyMask(NDManager m, Batch b) {
    return m.create(b.keyMask, new Shape(b.rows, b.width));
  }

  private NDArray maskedNll(NDManager sub, Batch b) {
    return maskedNll(sub, b, decoder.hidden(tokens(sub, b), positions(sub, b), keyMask(sub, b), null));
  }

  /**
   * Mean of -log p(target) over the completion targets (prompt and padding positions carry no
   * loss). Only those positions go through the output layer: the logits of every position, [rows,
   * width, vocabulary], were most of a step's memory on a real vocabulary (SmolLM2's 49,152: 440 MB
   * for 32 rows of 70 tokens, as much again for their log-softmax and for each gradient), for the
   * quarter of the tokens a rollout's completion is.
   */
  private NDArray maskedNll(NDManager sub, Batch b, NDArray hidden) {
    int n = 0;
    for (float w : b.weights) {
      n += w > 0 ? 1 : 0;
    }
    long[] at = new long[n];
    int[] picked = new int[n];
    for (int i = 0, j = 0; i < b.weights.length; i++) {
      if (b.weights[i] > 0) {
        at[j] = i;
        picked[j++] = b.targets[i];
      }
    }
    NDArray trained = hidden.reshape(-1, hidden.getShape().get(2)).get(new NDIndex("{}", sub.create(at)));
    NDArray logProbs = decoder.logits(trained).logSoftmax(-1); // [n, vocabulary]
    NDArray targets = sub.create(picked).toType(DataType.INT64, false);
    NDArray nll = logProbs.gather(targets.expandDims(-1), -1).squeeze(-1);
    return nll.sum().neg().div(Scalars.of(nll, b.weightSum));
  }

  /**
   * Rows right-padded to a common width: inputs are prompt + completion minus the last token, targets
   * the same shifted by one. A row longer than the context loses its left end (the prompt first).
   */
  static final class Batch {
    final int rows;
    final int width;
    final int[] inputs;
    final int[] positions;
    final int[] keyMask;
    final int[] targets;
    final float[] weights;
    float weightSum;

    private Batch(int rows, int width) {
      this.rows = rows;
      this.width = width;
      inputs = new int[rows * width];
      positions = new int[rows * width];
      keyMask = new int[rows * width];
      targets = new int[rows * width];
      weights = new float[rows * width];
    }

    static Batch of(List<Example> examples, int context) {
      int width = 1;
      for (Example e : examples) {
        width = Math.max(width, Math.min(context, e.ids().length - 1));
      }
      Batch b = new Batch(examples.size(), width);
      for (int r = 0; r < examples.size(); r++) {
        Example e = examples.get(r);
        int[] seq = e.ids();
        int start = Math.max(0, seq.length - (context + 1));
        int n = seq.length - start - 1;
        for (int i = 0; i < n; i++) {
          int at = r * width + i;
          b.inputs[at] = seq[start + i];
          b.positions[at] = i;
          b.keyMask[at] = 1;
          b.targets[at] = seq[start + 1 + i];
          // target i is seq[start + 1 + i]: learned iff the model wrote that token
          b.weights[at] = e.trained()[start + 1 + i] ? 1f : 0f;
          b.weightSum += b.weights[at];
        }
      }
      return b;
    }
  }

  @Override
  public void close() {
    optimizer.close();
  }
}
