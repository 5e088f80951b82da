package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.ndarray.types.SparseFormat;
import ai.djl.nn.Activation;
import ai.djl.nn.core.Embedding;
import ai.djl.nn.core.Linear;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import whale.model.Scalars;

/**
 * The Llama-family decoder (Llama, Llama 3 RoPE scaling, Mistral without sliding window, Qwen2 with
 * q/k/v bias, Qwen3 with q/k norm and its own head_dim) written out on NDArrays, top to bottom:
 *
 * <pre>
 *   x = embed_tokens[tokens]
 *   per layer:  x += o_proj(attention(rope(q_proj(rms(x))), rope(k_proj(rms(x))), v_proj(rms(x))))
 *               x += down_proj(silu(gate_proj(rms(x))) * up_proj(rms(x)))
 *   logits = lm_head(rms(x))      (lm_head = embed_tokens when tie_word_embeddings)
 * </pre>
 *
 * Parameters keep their Hugging Face names (model.layers.0.self_attn.q_proj.weight ...) and layout
 * ([out, in] for projections), so a checkpoint maps one to one. Numerics follow transformers'
 * modeling_llama.py / modeling_qwen3.py in float32: RMSNorm as x * rsqrt(mean(x^2) + eps) * w,
 * RoPE in the rotate-half layout, softmax over scores scaled by 1/sqrt(head_dim).
 *
 * <p>Every operation takes an activation as its first operand, so results belong to the caller's
 * per-call manager rather than to the weights' long-lived one (as in TinyGpt).
 *
 * <p>A float16 base ({@link #load(Path, NDManager, DataType)}) holds its matrices (embeddings,
 * projections, lm_head: all but 0.6% of the fixtures' parameters, far less of a real model's) in
 * float16; norms, biases, LoRA adapters and the residual stream stay float32. See {@link #matmulT}
 * for where the arithmetic happens.
 */
public final class LlamaDecoder {
  /** Added to masked attention scores: finite, so a row with every key masked gives no NaN. */
  static final float MASKED = -1e9f;

  private final HfConfig config;
  private final LinkedHashMap<String, NDArray> weights;
  /** FLOAT32, or FLOAT16 for a half-precision base (its matrices; see the class comment). */
  private final DataType baseType;
  /** Whether float16 matrices multiply in float16 (on a GPU) rather than upcast to float32. */
  private final boolean halfGemm;
  private final Map<String, Lora> adapters = new LinkedHashMap<>();
  /** cos and sin of every position's rotary angles, [max_position_embeddings, head_dim] each. */
  private final NDArray ropeCos;
  private final NDArray ropeSin;

  /** A LoRA adapter on one projection: W x + scale * B (A x). A is [r, in], B is [out, r]. */
  public record Lora(NDArray a, NDArray b, float scale) {}

  private LlamaDecoder(HfConfig config, LinkedHashMap<String, NDArray> weights, DataType baseType,
      NDManager manager) {
    this.config = config;
    this.weights = weights;
    this.baseType = baseType;
    this.halfGemm = baseType == DataType.FLOAT16 && manager.getDevice().isGpu();
    double[] inv = config.rope().inverseFrequencies(config.headDim());
    float[] invFreq = new float[inv.length];
    for (int i = 0; i < inv.length; i++) {
      invFreq[i] = (float) inv[i];
    }
    // A table once, looked up per call: the angles are float32 position * inv_freq as in
    // transformers, and sampling would otherwise recompute them for every new token.
    try (NDManager tmp = manager.newSubManager()) {
      NDArray freqs = tmp.arange(0f, (float) config.maxPositions()).expandDims(1)
          .mul(tmp.create(invFreq, new Shape(1, invFreq.length))); // [P, hd/2]
      NDArray emb = freqs.concat(freqs, -1);
      ropeCos = emb.cos();
      ropeSin = emb.sin();
      ropeCos.attach(manager);
      ropeSin.attach(manager);
    }
  }

  /**
   * Checks a model directory without loading a weight: config.json, every safetensors header and
   * shard, each expected tensor's presence, shape and dtype, and tokenizer.json. Cheap enough for
   * {@code whale start}; each problem is an IOException naming the file and field or tensor.
   */
  public static HfConfig check(Path dir) throws IOException {
    HfConfig config = HfConfig.read(dir);
    Safetensors st = Safetensors.openDirectory(dir);
    for (Map.Entry<String, long[]> e : shapes(config).entrySet()) {
      st.check(e.getKey(), e.getValue(), dir.resolve(HfConfig.FILE).toString());
    }
    if (!java.nio.file.Files.exists(dir.resolve(HfTokenizer.FILE))) {
      throw new IOException(dir + ": no " + HfTokenizer.FILE + " (whale reads fast tokenizers only)");
    }
    return config;
  }

  /** Reads config.json and the safetensors weights of a model directory into {@code manager}. */
  public static LlamaDecoder load(Path dir, NDManager manager) throws IOException {
    return load(dir, manager, DataType.FLOAT32);
  }

  /**
   * As {@link #load(Path, NDManager)}, the matrices held as {@code baseType}: FLOAT32, or FLOAT16
   * (F32 and BF16 tensors rounded to nearest on load, F16 ones kept exactly). A float16 base is
   * for LoRA only: its weights cannot be trained (see {@link SftTrainer#full}).
   */
  public static LlamaDecoder load(Path dir, NDManager manager, DataType baseType)
      throws IOException {
    if (baseType != DataType.FLOAT32 && baseType != DataType.FLOAT16) {
      throw new IllegalArgumentException("base weights are float32 or float16, not " + baseType);
    }
    HfConfig config = HfConfig.read(dir);
    Safetensors st = Safetensors.openDirectory(dir);
    LinkedHashMap<String, NDArray> weights = new LinkedHashMap<>();
    for (Map.Entry<String, long[]> e : shapes(config).entrySet()) {
      float[] values = st.read(e.getKey(), e.getValue(), dir.resolve(HfConfig.FILE).toString());
      NDArray array = manager.create(values, new Shape(e.getValue()));
      if (baseType == DataType.FLOAT16 && e.getValue().length == 2) {
        NDArray half = array.toType(DataType.FLOAT16, false);
        array.close(); // one float32 tensor at a time, so loading peaks at the largest one
        array = half;
      }
      array.setName(e.getKey());
      weights.put(e.getKey(), array);
    }
    return new LlamaDecoder(config, weights, baseType, manager);
  }

  /** Names and shapes of every parameter, in Hugging Face's names and order. */
  public static LinkedHashMap<String, long[]> shapes(HfConfig c) {
    long d = c.hiddenSize();
    long q = (long) c.heads() * c.headDim();
    long kv = (long) c.kvHeads() * c.headDim();
    LinkedHashMap<String, long[]> s = new LinkedHashMap<>();
    s.put("model.embed_tokens.weight", new long[] {c.vocabSize(), d});
    for (int i = 0; i < c.layers(); i++) {
      String p = "model.layers." + i + ".";
      s.put(p + "input_layernorm.weight", new long[] {d});
      linear(s, p + "self_attn.q_proj", q, d, c.qkvBias());
      linear(s, p + "self_attn.k_proj", kv, d, c.qkvBias());
      linear(s, p + "self_attn.v_proj", kv, d, c.qkvBias());
      linear(s, p + "self_attn.o_proj", d, q, c.oBias());
      if (c.qkNorm()) {
        s.put(p + "self_attn.q_norm.weight", new long[] {c.headDim()});
        s.put(p + "self_attn.k_norm.weight", new long[] {c.headDim()});
      }
      s.put(p + "post_attention_layernorm.weight", new long[] {d});
      linear(s, p + "mlp.gate_proj", c.intermediateSize(), d, c.mlpBias());
      linear(s, p + "mlp.up_proj", c.intermediateSize(), d, c.mlpBias());
      linear(s, p + "mlp.down_proj", d, c.intermediateSize(), c.mlpBias());
    }
    s.put("model.norm.weight", new long[] {d});
    if (!c.tieWordEmbeddings()) {
      s.put("lm_head.weight", new long[] {c.vocabSize(), d});
    }
    return s;
  }

  private static void linear(Map<String, long[]> s, String name, long out, long in, boolean bias) {
    s.put(name + ".weight", new long[] {out, in});
    if (bias) {
      s.put(name + ".bias", new long[] {out});
    }
  }

  public HfConfig config() {
    return config;
  }

  /** FLOAT32, or FLOAT16 when the base's matrices are held in half precision. */
  public DataType baseType() {
    return baseType;
  }

  /** Bytes the base weights occupy (adapters not included). */
  public long parameterBytes() {
    long bytes = 0;
    for (NDArray w : weights.values()) {
      bytes += w.size() * w.getDataType().getNumOfBytes();
    }
    return bytes;
  }

  /** Parameter arrays by Hugging Face name. */
  public Map<String, NDArray> weights() {
    return Collections.unmodifiableMap(weights);
  }

  /** LoRA adapters by module name (model.layers.0.self_attn.q_proj ...). */
  public Map<String, Lora> adapters() {
    return Collections.unmodifiableMap(adapters);
  }

  /** Adds (or replaces) the adapter on {@code module}, which must be one of the projections. */
  public void attach(String module, Lora lora) {
    NDArray w = weights.get(module + ".weight");
    if (w == null || w.getShape().dimension() != 2 || module.endsWith("embed_tokens")) {
      throw new IllegalArgumentException("no projection named " + module + " for a LoRA adapter");
    }
    Shape a = lora.a().getShape();
    Shape b = lora.b().getShape();
    if (a.get(1) != w.getShape().get(1) || b.get(0) != w.getShape().get(0) || a.get(0) != b.get(1)) {
      throw new IllegalArgumentException("LoRA adapter for " + module + ": A " + a + " and B " + b
          + " do not fit the weight " + w.getShape());
    }
    adapters.put(module, lora);
  }

  /** Space for keys and values of {@code rows} sequences up to {@code capacity} positions. */
  public KvCache newCache(NDManager manager, int rows, int capacity) {
    return new KvCache(manager, config, rows, capacity);
  }

  /**
   * The final hidden states of {@code tokens} [B,T] (int) at {@code positions} [B,T] (their RoPE
   * positions), each seeing the keys allowed by {@code keyMask} [B,S] (1 for a real token, 0 for
   * padding; S = what the cache held before plus T) and, causally, only earlier columns. With a
   * cache, the new keys and values are written at its current length, which then grows by T; without
   * one (training), S = T.
   */
  public NDArray hidden(NDArray tokens, NDArray positions, NDArray keyMask, KvCache cache) {
    long b = tokens.getShape().get(0);
    int t = (int) tokens.getShape().get(1);
    int past = cache == null ? 0 : cache.length;
    NDManager m = tokens.getManager();
    NDArray x = Embedding.embedding(tokens, weights.get("model.embed_tokens.weight"),
        SparseFormat.DENSE).singletonOrThrow();
    if (x.getDataType() != DataType.FLOAT32) {
      x = x.toType(DataType.FLOAT32, false); // only the looked-up rows of a float16 table
    }
    NDArray[] rope = rope(positions);
    NDArray mask = attentionMask(m, keyMask, past, t);
    for (int i = 0; i < config.layers(); i++) {
      String p = "model.layers." + i + ".";
      NDArray h = rmsNorm(x, weights.get(p + "input_layernorm.weight"));
      x = x.add(attention(h, p + "self_attn.", rope, mask, cache, i, b, t, past));
      h = rmsNorm(x, weights.get(p + "post_attention_layernorm.weight"));
      NDArray gate = project(h, p + "mlp.gate_proj");
      NDArray up = project(h, p + "mlp.up_proj");
      x = x.add(project(gate.mul(Activation.sigmoid(gate)).mul(up), p + "mlp.down_proj"));
    }
    if (cache != null) {
      cache.length += t;
    }
    return rmsNorm(x, weights.get("model.norm.weight"));
  }

  /** Output logits of hidden states [..., d] to [..., V]. */
  public NDArray logits(NDArray hidden) {
    String head = config.tieWordEmbeddings() ? "model.embed_tokens.weight" : "lm_head.weight";
    return matmulT(hidden, weights.get(head));
  }

  /**
   * x W^T as float32. A float32 W as it is. A float16 W on the CPU is upcast to float32 for this
   * one product and the copy dropped: libtorch's CPU half GEMM measured 3x slower than float32
   * here (64x1024 by 1024x1024: 4.2 ms vs 1.3 ms; 1.7 ms with the upcast) and rounds its output to
   * float16 (twice the upcast's error), so the base's only error is the rounding of its weights.
   * On a GPU it multiplies in float16 (tensor cores; not yet measured here) and the result returns
   * to float32, as torch.autocast does for linear layers; norms, softmax and the residual stream
   * stay float32 either way.
   */
  private NDArray matmulT(NDArray x, NDArray w) {
    if (w.getDataType() == DataType.FLOAT32) {
      return Linear.linear(x, w).singletonOrThrow();
    }
    if (halfGemm) {
      return Linear.linear(x.toType(DataType.FLOAT16, false), w).singletonOrThrow()
          .toType(DataType.FLOAT32, false);
    }
    NDArray up = w.toType(DataType.FLOAT32, false);
    up.attach(x.getManager()); // freed with the caller's per-call arrays, not kept beside W
    return Linear.linear(x, up).singletonOrThrow();
  }

  private NDArray attention(NDArray x, String p, NDArray[] rope, NDArray mask, KvCache cache,
      int layer, long b, int t, int past) {
    int h = config.heads();
    int kvh = config.kvHeads();
    int hd = config.headDim();
    int group = h / kvh;
    NDArray q = project(x, p + "q_proj").reshape(b, t, h, hd);
    NDArray k = project(x, p + "k_proj").reshape(b, t, kvh, hd);
    NDArray v = project(x, p + "v_proj").reshape(b, t, kvh, hd);
    if (config.qkNorm()) { // Qwen3: RMSNorm over each head's vector, before RoPE
      q = rmsNorm(q, weights.get(p + "q_norm.weight"));
      k = rmsNorm(k, weights.get(p + "k_norm.weight"));
    }
    q = applyRope(q.transpose(0, 2, 1, 3), rope); // [B,H,T,hd]
    k = applyRope(k.transpose(0, 2, 1, 3), rope); // [B,kvH,T,hd]
    v = v.transpose(0, 2, 1, 3);
    if (cache != null) {
      NDIndex at = new NDIndex(":, :, {}:{}", past, past + t);
      cache.keys[layer].set(at, k);
      cache.values[layer].set(at, v);
      NDIndex seen = new NDIndex(":, :, 0:{}", past + t);
      k = cache.keys[layer].get(seen);
      v = cache.values[layer].get(seen);
    }
    long s = k.getShape().get(2);
    // Grouped-query attention without copying K and V: query heads g*group .. g*group+group-1 share
    // KV head g (transformers' repeat_kv), so fold each group's heads into the row axis.
    NDArray scores = q.reshape(b, kvh, (long) group * t, hd)
        .matMul(k.transpose(0, 1, 3, 2))
        .mul(Scalars.of(q, 1.0 / Math.sqrt(hd)))
        .reshape(b, h, t, s)
        .add(mask);
    NDArray y = scores.softmax(-1).reshape(b, kvh, (long) group * t, s).matMul(v); // [B,kvH,gT,hd]
    y = y.reshape(b, h, t, hd).transpose(0, 2, 1, 3).reshape(b, t, (long) h * hd);
    return project(y, p + "o_proj");
  }

  /** x W^T (+ bias), plus the LoRA term scale * (x A^T) B^T when an adapter is attached. */
  private NDArray project(NDArray x, String module) {
    NDArray bias = weights.get(module + ".bias");
    NDArray w = weights.get(module + ".weight");
    NDArray y;
    if (w.getDataType() == DataType.FLOAT32) { // the float32 path exactly as it always was
      NDList out = bias == null ? Linear.linear(x, w) : Linear.linear(x, w, bias);
      y = out.singletonOrThrow();
    } else {
      y = matmulT(x, w);
      y = bias == null ? y : y.add(bias);
    }
    Lora lora = adapters.get(module);
    if (lora != null) {
      NDArray low = Linear.linear(x, lora.a()).singletonOrThrow();
      NDArray up = Linear.linear(low, lora.b()).singletonOrThrow();
      y = y.add(up.mul(Scalars.of(up, lora.scale())));
    }
    return y;
  }

  /** RMSNorm over the last axis: x * rsqrt(mean(x^2) + eps) * weight. */
  private NDArray rmsNorm(NDArray x, NDArray weight) {
    NDArray meanSq = x.square().mean(new int[] {-1}, true);
    NDArray rms = meanSq.add(Scalars.of(meanSq, config.rmsNormEps())).sqrt();
    return x.div(rms).mul(weight);
  }

  /** cos and sin [B,1,T,hd] of positions [B,T], from the table. */
  private NDArray[] rope(NDArray positions) {
    return new NDArray[] {
      Embedding.embedding(positions, ropeCos, SparseFormat.DENSE).singletonOrThrow().expandDims(1),
      Embedding.embedding(positions, ropeSin, SparseFormat.DENSE).singletonOrThrow().expandDims(1)
    };
  }

  /** x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1] for halves x1, x2 of each head. */
  private NDArray applyRope(NDArray x, NDArray[] rope) {
    int half = config.headDim() / 2;
    NDArray x1 = x.get(new NDIndex("..., 0:{}", half));
    NDArray x2 = x.get(new NDIndex("..., {}:", half));
    NDArray rotated = x2.neg().concat(x1, -1);
    return x.mul(rope[0]).add(rotated.mul(rope[1]));
  }

  /**
   * [B,1,T,S] additive mask: query t (cache column past + t) sees key columns up to its own, and
   * none that {@code keyMask} marks as padding.
   */
  private static NDArray attentionMask(NDManager m, NDArray keyMask, int past, int t) {
    int s = past + t;
    if (t == 1 && keyMask != null) { // one new token sees every earlier column: padding only
      NDArray pad = keyMask.toType(DataType.FLOAT32, false).sub(1f).mul(-MASKED);
      return pad.reshape(keyMask.getShape().get(0), 1, 1, s);
    }
    float[] causal = new float[t * s];
    for (int i = 0; i < t; i++) {
      for (int j = past + i + 1; j < s; j++) {
        causal[i * s + j] = MASKED;
      }
    }
    NDArray mask = m.create(causal, new Shape(1, 1, t, s));
    if (keyMask != null) {
      NDArray pad = keyMask.toType(DataType.FLOAT32, false).sub(1f).mul(-MASKED); // 0 or MASKED
      mask = mask.add(pad.reshape(keyMask.getShape().get(0), 1, 1, s));
    }
    return mask;
  }

  /** Keys and values of earlier positions, one preallocated [B,kvH,capacity,hd] pair per layer. */
  public static final class KvCache {
    final NDArray[] keys;
    final NDArray[] values;
    int length;

    KvCache(NDManager manager, HfConfig c, int rows, int capacity) {
      keys = new NDArray[c.layers()];
      values = new NDArray[c.layers()];
      Shape shape = new Shape(rows, c.kvHeads(), capacity, c.headDim());
      for (int i = 0; i < c.layers(); i++) {
        keys[i] = manager.zeros(shape);
        values[i] = manager.zeros(shape);
      }
    }

    public int length() {
      return length;
    }

    /** Keeps only the rows at {@code index} (int, along the batch axis), freeing the old arrays. */
    public void keepRows(NDArray index) {
      for (int i = 0; i < keys.length; i++) {
        NDArray k = keys[i].get(new NDIndex("{}", index));
        NDArray v = values[i].get(new NDIndex("{}", index));
        keys[i].close();
        values[i].close();
        keys[i] = k;
        values[i] = v;
      }
    }
  }
}
