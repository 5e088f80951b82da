package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
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
    return Linear.linear(hidden(tokens), weights.get("wte")).singletonOrThrow();
  }

  /**
   * Logits at one position per row: [B,T] tokens and {@code positions[b]} (the row's last real token,
   * rows being right-padded) to [B,V]. Selecting the hidden state before the head keeps the work and
   * the copy to Java at B×V instead of B×T×V.
   */
  public NDArray lastLogits(NDArray tokens, int[] positions) {
    NDArray h = hidden(tokens); // [B,T,d]
    long t = tokens.getShape().get(1);
    NDArray select = tokens.getManager().create(positions).oneHot((int) t).expandDims(1); // [B,1,T]
    NDArray last = select.matMul(h).squeeze(1); // [B,d]
    return Linear.linear(last, weights.get("wte")).singletonOrThrow();
  }

  /** The residual stream after the final LayerNorm: [B,T] to [B,T,d]. */
  private NDArray hidden(NDArray tokens) {
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
      x = x.add(attention(layerNorm(x, p + "ln1"), mask, p, b, t));
      x = x.add(mlp(layerNorm(x, p + "ln2"), p));
    }
    return layerNorm(x, "lnf");
  }

  private NDArray attention(NDArray x, NDArray mask, String p, long b, int t) {
    int h = config.heads();
    int hd = config.headDim();
    NDArray qkv = x.matMul(weights.get(p + "attn.wqkv")).add(weights.get(p + "attn.bqkv.b"));
    // [B,T,3d] -> [3,B,H,T,hd]: one matmul for q, k and v, then split heads.
    qkv = qkv.reshape(b, t, 3, h, hd).transpose(2, 0, 3, 1, 4);
    NDArray q = qkv.get(0);
    NDArray k = qkv.get(1);
    NDArray v = qkv.get(2);
    NDArray scores = q.matMul(k.transpose(0, 1, 3, 2)).mul(Scalars.of(q, 1.0 / Math.sqrt(hd))).add(mask);
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
