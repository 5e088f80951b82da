package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.ndarray.types.SparseFormat;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.nn.core.Embedding;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.LayerNorm;
import ai.djl.training.ParameterStore;
import ai.djl.util.PairList;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A small GPT: token + learned position embeddings, {@code layers} pre-LayerNorm blocks of causal
 * multi-head self-attention and a GELU MLP, a final LayerNorm, and an output head tied to the token
 * embedding. Written out by hand because DJL's TransformerEncoderBlock uses BatchNorm and has no
 * causal mask.
 *
 * <p>Every operation below takes an activation (never a parameter) as its first operand, so results
 * belong to the caller's (per-step) manager rather than to the model's long-lived one.
 */
public final class TinyGpt extends AbstractBlock {
  private static final float LN_EPS = 1e-5f;
  /** Added to attention scores above the diagonal; large but finite so softmax never sees inf-inf. */
  private static final float MASKED = -1e9f;

  private final ModelConfig config;
  /** Parameters in a fixed order: the order of the checkpoint file. */
  private final LinkedHashMap<String, NDArray> weights = new LinkedHashMap<>();

  private TinyGpt(ModelConfig config, NDManager manager, Map<String, float[]> values) {
    this.config = config;
    for (Map.Entry<String, Shape> e : shapes(config).entrySet()) {
      float[] data = values.get(e.getKey());
      if (data == null || data.length != e.getValue().size()) {
        throw new IllegalArgumentException("missing or mis-sized parameter " + e.getKey());
      }
      NDArray array = manager.create(data, e.getValue());
      array.setName(e.getKey());
      array.setRequiresGradient(true);
      addParameter(
          Parameter.builder()
              .setName(e.getKey())
              .setType(e.getKey().endsWith(".g") ? Parameter.Type.GAMMA : Parameter.Type.WEIGHT)
              .optShape(e.getValue())
              .optArray(array)
              .build());
      weights.put(e.getKey(), array);
    }
  }

  /** Fresh weights: normal(0, 0.02), residual projections scaled by 1/sqrt(2·layers) as in GPT-2. */
  static TinyGpt initialize(ModelConfig config, NDManager manager, long seed) {
    SplittableRandom rng = new SplittableRandom(seed);
    Map<String, float[]> values = new LinkedHashMap<>();
    double residualStd = 0.02 / Math.sqrt(2.0 * config.layers());
    for (Map.Entry<String, Shape> e : shapes(config).entrySet()) {
      String name = e.getKey();
      float[] data = new float[(int) e.getValue().size()];
      if (name.endsWith(".g")) {
        java.util.Arrays.fill(data, 1f); // LayerNorm gain
      } else if (!name.endsWith(".b")) { // biases and LayerNorm shifts stay 0
        double std = name.endsWith(".wo") || name.endsWith(".w2") ? residualStd : 0.02;
        for (int i = 0; i < data.length; i++) {
          data[i] = (float) (rng.nextGaussian() * std);
        }
      }
      values.put(name, data);
    }
    return new TinyGpt(config, manager, values);
  }

  /** Weights read from a checkpoint, keyed by {@link #parameterShapes} names. */
  static TinyGpt fromValues(ModelConfig config, NDManager manager, Map<String, float[]> values) {
    return new TinyGpt(config, manager, values);
  }

  /** Names and shapes of every parameter, in checkpoint order. */
  static LinkedHashMap<String, Shape> shapes(ModelConfig c) {
    int d = c.dModel();
    int hidden = d * c.mlpRatio();
    LinkedHashMap<String, Shape> s = new LinkedHashMap<>();
    s.put("wte", new Shape(c.vocabSize(), d));
    s.put("wpe", new Shape(c.contextLength(), d));
    for (int i = 0; i < c.layers(); i++) {
      String p = "h" + i + ".";
      s.put(p + "ln1.g", new Shape(d));
      s.put(p + "ln1.b", new Shape(d));
      s.put(p + "attn.wqkv", new Shape(d, 3 * d));
      s.put(p + "attn.bqkv.b", new Shape(3 * d));
      s.put(p + "attn.wo", new Shape(d, d));
      s.put(p + "attn.bo.b", new Shape(d));
      s.put(p + "ln2.g", new Shape(d));
      s.put(p + "ln2.b", new Shape(d));
      s.put(p + "mlp.w1", new Shape(d, hidden));
      s.put(p + "mlp.b1.b", new Shape(hidden));
      s.put(p + "mlp.w2", new Shape(hidden, d));
      s.put(p + "mlp.b2.b", new Shape(d));
    }
    s.put("lnf.g", new Shape(d));
    s.put("lnf.b", new Shape(d));
    return s;
  }

  public ModelConfig config() {
    return config;
  }

  /** Parameter arrays by name, in checkpoint order. */
  Map<String, NDArray> weights() {
    return Collections.unmodifiableMap(weights);
  }

  public long parameterCount() {
    long n = 0;
    for (NDArray w : weights.values()) {
      n += w.size();
    }
    return n;
  }

  /** Logits at every position: int tokens [B,T] to float [B,T,V]. */
  public NDArray logits(NDArray tokens) {
    return Linear.linear(hidden(tokens, null), weights.get("wte")).singletonOrThrow();
  }

  /**
   * Logits at one position per row: [B,T] tokens and {@code positions[b]} (the row's last real token,
   * rows being right-padded) to [B,V]. Selecting the hidden state before the head keeps the work and
   * the copy to Java at B×V instead of B×T×V.
   */
  public NDArray lastLogits(NDArray tokens, int[] positions) {
    return lastLogits(tokens, positions, null);
  }

  /**
   * As {@link #lastLogits(NDArray, int[])}, also writing every layer's keys and values of the T
   * columns into {@code cache} (null: none), for {@link #stepLogits} to continue from.
   */
  NDArray lastLogits(NDArray tokens, int[] positions, KvCache cache) {
    NDArray h = hidden(tokens, cache); // [B,T,d]
    long t = tokens.getShape().get(1);
    NDArray select = tokens.getManager().create(positions).oneHot((int) t).expandDims(1); // [B,1,T]
    NDArray last = select.matMul(h).squeeze(1); // [B,d]
    return Linear.linear(last, weights.get("wte")).singletonOrThrow();
  }

  /** Query rows of the attention's products while stepping: a GEMM's rows sum alike from 8 rows on. */
  private static final int STEP_QUERY_ROWS = 8;

  /**
   * The logits [B,V] after one new token per row: {@code tokens} [B,1] at {@code positions[b]}; their
   * keys and values go into the cache at column positions[b], and row b attends to its columns
   * 0..positions[b] (its window from position 0: a window that has slid cannot continue here).
   *
   * <p>Bit for bit the logits of {@link #lastLogits} on the whole window, provided B is at least
   * {@link LanguageModel#MIN_GEMM_ROWS}: every product keeps shapes whose sums libtorch orders as in
   * the full pass. A GEMM's rows are independent from 8 rows on, so the query is repeated to 8 rows
   * for the attention's products; the key columns span at least {@code minWidth}; a masked column
   * weighs an exact zero, as the full pass's right padding does. LanguageModelTest holds this.
   */
  NDArray stepLogits(NDArray tokens, int[] positions, KvCache cache, int minWidth) {
    NDManager m = tokens.getManager();
    int b = positions.length;
    int span = minWidth;
    for (int p : positions) {
      span = Math.max(span, p + 1);
    }
    span = Math.min(span, cache.capacity);
    long[] column = new long[b];
    float[] visible = new float[b * span];
    for (int r = 0; r < b; r++) {
      column[r] = positions[r];
      for (int j = positions[r] + 1; j < span; j++) {
        visible[r * span + j] = MASKED;
      }
    }
    NDArray x = Embedding.embedding(tokens, weights.get("wte"), SparseFormat.DENSE).singletonOrThrow();
    NDArray pos = m.create(positions, new Shape(b, 1));
    x = x.add(Embedding.embedding(pos, weights.get("wpe"), SparseFormat.DENSE).singletonOrThrow());
    NDArray mask = m.create(visible, new Shape(b, 1, 1, span));
    NDArray rowIds = m.arange(0, b).toType(DataType.INT64, false);
    NDArray columnIds = m.create(column);
    NDIndex keyAt = new NDIndex("{}, :, :, {}", rowIds, columnIds);
    NDIndex valueAt = new NDIndex("{}, :, {}", rowIds, columnIds);
    for (int i = 0; i < config.layers(); i++) {
      String p = "h" + i + ".";
      x = x.add(stepAttention(layerNorm(x, p + "ln1"), mask, p, b, cache, i, keyAt, valueAt, span));
      x = x.add(mlp(layerNorm(x, p + "ln2"), p));
    }
    return Linear.linear(layerNorm(x, "lnf").squeeze(1), weights.get("wte")).singletonOrThrow();
  }

  private NDArray stepAttention(NDArray x, NDArray mask, String p, long b, KvCache cache, int layer,
      NDIndex keyAt, NDIndex valueAt, int span) {
    int h = config.heads();
    int hd = config.headDim();
    NDArray qkv = x.matMul(weights.get(p + "attn.wqkv")).add(weights.get(p + "attn.bqkv.b"));
    qkv = qkv.reshape(b, 1, 3, h, hd).transpose(2, 0, 3, 1, 4); // [3,B,H,1,hd]
    NDArray q = qkv.get(0);
    cache.keys[layer].set(keyAt, qkv.get(1).squeeze(2)); // keys[b, :, :, column[b]] = k[b, :, 0, :]
    cache.values[layer].set(valueAt, qkv.get(2).squeeze(2)); // values[b, :, column[b], :]
    NDArray kT = cache.keys[layer].get(new NDIndex(":, :, :, 0:{}", span)); // [B,H,hd,S]
    NDArray v = cache.values[layer].get(new NDIndex(":, :, 0:{}", span)); // [B,H,S,hd]
    NDArray rows = q.repeat(2, STEP_QUERY_ROWS); // [B,H,8,hd]: the same query 8 times
    NDArray scores = rows.matMul(kT).mul(Scalars.of(q, 1.0 / Math.sqrt(hd))).add(mask);
    NDArray y = scores.softmax(-1).matMul(v).get(new NDIndex(":, :, 0:1")); // [B,H,1,hd]
    y = y.transpose(0, 2, 1, 3).reshape(b, 1, (long) h * hd);
    return y.matMul(weights.get(p + "attn.wo")).add(weights.get(p + "attn.bo.b"));
  }

  /**
   * Keys and values of every layer for rows sampled together: keys [B,H,hd,capacity] (transposed, as
   * the full pass hands them to the score product), values [B,H,capacity,hd]; a window's position j
   * at column j, as in the full pass.
   */
  static final class KvCache implements AutoCloseable {
    final NDArray[] keys;
    final NDArray[] values;
    final int capacity;

    KvCache(NDManager m, ModelConfig c, long rows, int capacity) {
      this.capacity = capacity;
      keys = new NDArray[c.layers()];
      values = new NDArray[c.layers()];
      for (int i = 0; i < c.layers(); i++) {
        keys[i] = m.zeros(new Shape(rows, c.heads(), c.headDim(), capacity));
        values[i] = m.zeros(new Shape(rows, c.heads(), capacity, c.headDim()));
      }
    }

    /** Keeps only the rows at {@code index} (int64, along the batch axis). */
    void keepRows(NDArray index) {
      for (int i = 0; i < keys.length; i++) {
        keys[i] = take(keys[i], index);
        values[i] = take(values[i], index);
      }
    }

    private static NDArray take(NDArray a, NDArray index) {
      NDArray kept = a.get(new NDIndex("{}", index));
      a.close();
      return kept;
    }

    @Override
    public void close() {
      for (int i = 0; i < keys.length; i++) {
        keys[i].close();
        values[i].close();
      }
    }
  }

  /**
   * The residual stream after the final LayerNorm: [B,T] to [B,T,d], writing each layer's keys and
   * values into {@code cache} if any.
   */
  private NDArray hidden(NDArray tokens, KvCache cache) {
    long b = tokens.getShape().get(0);
    int t = (int) tokens.getShape().get(1);
    if (t > config.contextLength()) {
      throw new IllegalArgumentException(
          "sequence of " + t + " tokens exceeds context " + config.contextLength());
    }
    NDManager m = tokens.getManager();
    NDArray x = Embedding.embedding(tokens, weights.get("wte"), SparseFormat.DENSE).singletonOrThrow();
    NDArray pos = weights.get("wpe").get(new NDIndex("0:{}", t)); // [T,d]
    x = x.add(pos);
    NDArray mask = causalMask(m, t);
    for (int i = 0; i < config.layers(); i++) {
      String p = "h" + i + ".";
      x = x.add(attention(layerNorm(x, p + "ln1"), mask, p, b, t, cache, i));
      x = x.add(mlp(layerNorm(x, p + "ln2"), p));
    }
    return layerNorm(x, "lnf");
  }

  private NDArray attention(NDArray x, NDArray mask, String p, long b, int t, KvCache cache, int layer) {
    int h = config.heads();
    int hd = config.headDim();
    NDArray qkv = x.matMul(weights.get(p + "attn.wqkv")).add(weights.get(p + "attn.bqkv.b"));
    // [B,T,3d] -> [3,B,H,T,hd]: one matmul for q, k and v, then split heads.
    qkv = qkv.reshape(b, t, 3, h, hd).transpose(2, 0, 3, 1, 4);
    NDArray q = qkv.get(0);
    NDArray kT = qkv.get(1).transpose(0, 1, 3, 2); // [B,H,hd,T]
    NDArray v = qkv.get(2);
    if (cache != null) { // the window's keys and values at columns 0..T-1, for stepLogits
      cache.keys[layer].set(new NDIndex(":, :, :, 0:{}", t), kT);
      cache.values[layer].set(new NDIndex(":, :, 0:{}", t), v);
    }
    NDArray scores = q.matMul(kT).mul(Scalars.of(q, 1.0 / Math.sqrt(hd))).add(mask);
    NDArray y = scores.softmax(-1).matMul(v); // [B,H,T,hd]
    y = y.transpose(0, 2, 1, 3).reshape(b, t, (long) h * hd);
    return y.matMul(weights.get(p + "attn.wo")).add(weights.get(p + "attn.bo.b"));
  }

  private NDArray mlp(NDArray x, String p) {
    NDArray u = x.matMul(weights.get(p + "mlp.w1")).add(weights.get(p + "mlp.b1.b"));
    return Activation.gelu(u).matMul(weights.get(p + "mlp.w2")).add(weights.get(p + "mlp.b2.b"));
  }

  /** LayerNorm over the feature axis only (DJL's LayerNorm block would also normalise over time). */
  private NDArray layerNorm(NDArray x, String name) {
    return LayerNorm.layerNorm(
            x,
            new Shape(config.dModel()),
            weights.get(name + ".g"),
            weights.get(name + ".b"),
            LN_EPS)
        .singletonOrThrow();
  }

  /** [T,T]: 0 on and below the diagonal, {@link #MASKED} above it (position i sees only j ≤ i). */
  static NDArray causalMask(NDManager m, int t) {
    float[] mask = new float[t * t];
    for (int i = 0; i < t; i++) {
      for (int j = i + 1; j < t; j++) {
        mask[i * t + j] = MASKED;
      }
    }
    return m.create(mask, new Shape(t, t));
  }

  @Override
  protected NDList forwardInternal(
      ParameterStore parameterStore,
      NDList inputs,
      boolean training,
      PairList<String, Object> params) {
    return new NDList(logits(inputs.singletonOrThrow()));
  }

  @Override
  public Shape[] getOutputShapes(Shape[] inputShapes) {
    Shape in = inputShapes[0];
    return new Shape[] {new Shape(in.get(0), in.get(1), config.vocabSize())};
  }

  /** Names of parameters that get weight decay: matrices and embeddings, not gains or biases. */
  static List<String> decayed(ModelConfig c) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, Shape> e : shapes(c).entrySet()) {
      if (e.getValue().dimension() >= 2) {
        out.add(e.getKey());
      }
    }
    return out;
  }
}
