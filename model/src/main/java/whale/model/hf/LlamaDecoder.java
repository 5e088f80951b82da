package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.ndarray.types.SparseFormat;
import ai.djl.nn.Activation;
import ai.djl.nn.core.Embedding;
import ai.djl.nn.core.Linear;
import ai.djl.pytorch.engine.PtNDArray;
import ai.djl.pytorch.jni.JniUtils;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import whale.model.Backprop;
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
 * <p>At small sizes a decode step costs what its native calls cost, not what they compute, so the
 * code counts them: constants (RoPE's rotation, eps, the score scale) are tensors made once, keys are
 * cached transposed, and the cache is sliced and written with one JNI call each (see {@link #slice}).
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
  /**
   * rotate_half as a [head_dim, head_dim] linear weight of 0 and +-1: x W^T = [-x2, x1], one native
   * call instead of two slices, a negation and a concat, and exact (each output is one +-x plus zeros).
   */
  private final NDArray rotateHalf;
  /** rms_norm_eps and 1/sqrt(head_dim) as tensors made once, not once per use. */
  private final NDArray eps;
  private final NDArray scoreScale;

  /** A LoRA adapter on one projection: W x + scale * B (A x). A is [r, in], B is [out, r]. */
  public record Lora(NDArray a, NDArray b, float scale) {}

  /**
   * Base weights held once per process for every decoder loaded from one directory in one
   * precision on one device ({@link #loadShared}): the training copy of an RSFT step, each cached
   * sampling copy of a LoRA checkpoint and the base itself differ only in their adapters. Before,
   * each held its own 538 MB of SmolLM2-135M (a worker's model cache holds four).
   */
  private static final class SharedBase {
    final String key;
    final NDManager manager;
    final LinkedHashMap<String, NDArray> weights;
    int users;

    SharedBase(String key, NDManager manager, LinkedHashMap<String, NDArray> weights) {
      this.key = key;
      this.manager = manager;
      this.weights = weights;
    }
  }

  private static final Map<String, SharedBase> SHARED = new java.util.HashMap<>();
  /** The shared base this decoder's weights are, or null once they are its own. */
  private SharedBase shared;

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
    int hd = config.headDim();
    int half = hd / 2;
    float[] rot = new float[hd * hd]; // [out, in]
    for (int j = 0; j < half; j++) {
      rot[j * hd + j + half] = -1; // out j = -x[j + half]
      rot[(j + half) * hd + j] = 1; // out j + half = x[j]
    }
    rotateHalf = manager.create(rot, new Shape(hd, hd));
    eps = manager.create((float) config.rmsNormEps());
    scoreScale = manager.create((float) (1.0 / Math.sqrt(hd)));
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

  /**
   * As {@link #load(Path, NDManager, DataType)}, the weights shared with every other decoder of the
   * same directory, precision and device in this process (read once); {@link #release} gives them
   * back. A shared weight is never written: fresh adapters train beside it, and full fine-tuning
   * first takes a copy of its own ({@link #ownWeights}).
   */
  public static LlamaDecoder loadShared(Path dir, NDManager manager, DataType baseType)
      throws IOException {
    HfConfig config = HfConfig.read(dir);
    String key = dir.toRealPath() + "|" + HfCheckpoint.fingerprint(dir) + "|" + baseType + "|"
        + manager.getDevice();
    synchronized (SHARED) {
      SharedBase b = SHARED.get(key);
      if (b == null) {
        NDManager owner = NDManager.newBaseManager(manager.getDevice());
        try {
          b = new SharedBase(key, owner, load(dir, owner, baseType).weights);
        } catch (IOException | RuntimeException e) {
          owner.close();
          throw e;
        }
        SHARED.put(key, b);
      }
      b.users++;
      LlamaDecoder d = new LlamaDecoder(config, new LinkedHashMap<>(b.weights), baseType, manager);
      d.shared = b;
      return d;
    }
  }

  /** Gives back shared weights (the last user frees them); a no-op for weights of its own. */
  public void release() {
    synchronized (SHARED) {
      if (shared != null && --shared.users == 0) {
        SHARED.remove(shared.key);
        shared.manager.close();
      }
      shared = null;
    }
  }

  /**
   * Makes the weights this decoder's own, in {@code manager}, so that they can be trained: the
   * shared arrays themselves when no other decoder uses them (resuming a full fine-tune: no second
   * copy of the model, 538 MB on SmolLM2-135M, even for a moment), copies otherwise.
   */
  public void ownWeights(NDManager manager) {
    synchronized (SHARED) {
      if (shared == null) {
        return;
      }
      if (shared.users == 1) {
        SHARED.remove(shared.key); // no later loadShared can hand these out: they will change
        for (NDArray w : weights.values()) {
          w.attach(manager);
        }
        shared.manager.close(); // holds nothing now
        shared = null;
        return;
      }
      for (Map.Entry<String, NDArray> e : weights.entrySet()) {
        NDArray copy = e.getValue().duplicate();
        copy.attach(manager);
        copy.setName(e.getKey());
        e.setValue(copy);
      }
    }
    release();
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
      NDArray array = st.readArray(e.getKey(), e.getValue(), dir.resolve(HfConfig.FILE).toString(),
          manager);
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
      bytes += bytes(w);
    }
    return bytes;
  }

  private static long bytes(NDArray a) {
    return a.size() * a.getDataType().getNumOfBytes();
  }

  /**
   * Native bytes closing this decoder frees: its own weights (none while they are shared, see
   * {@link #loadShared}) and its adapters.
   */
  public long ownedBytes() {
    long bytes;
    synchronized (SHARED) {
      bytes = shared == null ? parameterBytes() : 0;
    }
    for (Lora l : adapters.values()) {
      bytes += bytes(l.a()) + bytes(l.b());
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

  /**
   * Space for keys and values of {@code rows} sequences up to {@code capacity} positions;
   * {@code keyMask} [rows * capacity] marks each column 1 (a real token) or 0 (padding, never seen).
   */
  public KvCache newCache(NDManager manager, int rows, int capacity, int[] keyMask) {
    return new KvCache(manager, config, rows, capacity, keyMask);
  }

  /**
   * The final hidden states of {@code tokens} [B,T] (int) at {@code positions} [B,T] (their RoPE
   * positions), each seeing, causally, only earlier columns and none marked as padding. Without a
   * cache (training) {@code keyMask} [B,T] (1 for a real token, 0 for padding; null: all real) marks
   * the padding. With one, the cache's own key mask does (keyMask must be null), the new keys and
   * values are written at its current length, which then grows by T, and each token sees every
   * earlier column of the cache.
   */
  public NDArray hidden(NDArray tokens, NDArray positions, NDArray keyMask, KvCache cache) {
    if (cache != null && keyMask != null) {
      throw new IllegalArgumentException("with a cache, its own key mask applies: pass no keyMask");
    }
    long b = tokens.getShape().get(0);
    int t = (int) tokens.getShape().get(1);
    int past = cache == null ? 0 : cache.length;
    NDArray x = embed(tokens);
    NDArray[] rope = rope(positions.reshape(b, t, 1));
    NDArray mask = attentionMask(tokens.getManager(), keyMask, cache, past, t);
    for (int i = 0; i < config.layers(); i++) {
      NDArray out = layer(i, x, rope, mask, cache, b, t, past);
      if (i > 0) {
        x.close(); // the previous layer's output (layer 0's input is the caller's embedding)
      }
      x = out;
    }
    if (cache != null) {
      cache.length += t;
    }
    return rmsNorm(x, weights.get("model.norm.weight"));
  }

  /**
   * Backward of {@code loss(hidden(tokens, positions, keyMask, null))} with activation
   * checkpointing: the forward pass records nothing and keeps only each layer's input ([B,T,d],
   * 2.3 KB a token on SmolLM2-135M); the backward pass recomputes one layer at a time with autograd
   * on and sends the gradient of its output through it. Autograd's saved activations (about 70 KB a
   * token for each of 30 layers, 1 GB for a 512-token micro-batch) are then one layer's at a time,
   * for one more forward pass of compute, as transformers' gradient_checkpointing. Gradients add to
   * the trainable arrays' as {@link Backprop#backward} does. Returns the loss's value.
   */
  public float backwardCheckpointed(NDArray tokens, NDArray positions, NDArray keyMask,
      java.util.function.Function<NDArray, NDArray> loss) {
    long b = tokens.getShape().get(0);
    int t = (int) tokens.getShape().get(1);
    NDManager m = tokens.getManager();
    int n = config.layers();
    NDArray[] inputs = new NDArray[n + 1]; // inputs[i] enters layer i; inputs[n] leaves the last
    NDArray[] rope;
    NDArray mask;
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    try {
      rope = rope(positions.reshape(b, t, 1));
      mask = attentionMask(m, keyMask, null, 0, t);
      inputs[0] = embed(tokens);
      for (int i = 0; i < n; i++) {
        inputs[i + 1] = layer(i, inputs[i], rope, mask, null, b, t, 0);
      }
    } finally {
      JniUtils.setGradMode(grad);
    }
    float value;
    try (Backprop backprop = new Backprop()) {
      NDArray gradient;
      try (NDScope head = new NDScope()) {
        NDArray last = inputs[n];
        last.setRequiresGradient(true);
        NDArray scalar = loss.apply(rmsNorm(last, weights.get("model.norm.weight")));
        value = scalar.getFloat();
        backprop.backward(scalar);
        gradient = last.getGradient();
        NDScope.unregister(gradient);
      }
      inputs[n].close();
      for (int i = n - 1; i >= 0; i--) {
        NDArray next;
        try (NDScope layer = new NDScope()) {
          NDArray in = inputs[i];
          in.setRequiresGradient(true);
          backprop.backward(layer(i, in, rope, mask, null, b, t, 0), gradient);
          next = in.getGradient();
          NDScope.unregister(next);
        }
        gradient.close();
        inputs[i].close();
        gradient = next;
      }
      if (weights.get("model.embed_tokens.weight").hasGradient()) { // full fine-tuning
        try (NDScope embedding = new NDScope()) {
          backprop.backward(embed(tokens), gradient);
        }
      }
      gradient.close();
    }
    return value;
  }

  /** Input embeddings [B,T,d], float32, of tokens [B,T]. */
  private NDArray embed(NDArray tokens) {
    NDArray table = weights.get("model.embed_tokens.weight");
    NDArray x = Embedding.embedding(tokens, table, SparseFormat.DENSE).singletonOrThrow();
    if (table.getDataType() != DataType.FLOAT32) {
      x = x.toType(DataType.FLOAT32, false); // only the looked-up rows of a float16 table
    }
    return x;
  }

  /** Decoder layer {@code i} on its input {@code x} [B,T,d]; x stays open. */
  private NDArray layer(int i, NDArray x, NDArray[] rope, NDArray mask, KvCache cache, long b,
      int t, int past) {
    String p = "model.layers." + i + ".";
    NDArray out;
    // A layer's intermediates are closed with the layer; autograd keeps what backward needs. Left
    // to the caller's scope, a forward pass held every layer's activations at once: sampling
    // SmolLM2-135M (30 layers) peaked at 9.3 GB of live tensors for 64 chat prompts.
    try (NDScope layer = new NDScope()) {
      NDArray h = rmsNorm(x, weights.get(p + "input_layernorm.weight"));
      NDArray mid = x.add(attention(h, p + "self_attn.", rope, mask, cache, i, b, t, past));
      h = rmsNorm(mid, weights.get(p + "post_attention_layernorm.weight"));
      NDArray gate = project(h, p + "mlp.gate_proj");
      NDArray up = project(h, p + "mlp.up_proj");
      out = mid.add(project(gate.mul(Activation.sigmoid(gate)).mul(up), p + "mlp.down_proj"));
      NDScope.unregister(out);
    }
    NDScope.register(out); // the caller's scope, if any, closes it as it did
    return out;
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
    q = applyRope(q, rope); // [B,T,H,hd]
    k = applyRope(k, rope).transpose(0, 2, 3, 1); // [B,kvH,hd,T]: keys transposed, ready for q k^T
    v = v.transpose(0, 2, 1, 3); // [B,kvH,T,hd]
    if (cache != null) {
      int s = past + t;
      write(cache.keys[layer], 3, past, s, k);
      write(cache.values[layer], 2, past, s, v);
      k = slice(cache.keys[layer], 3, 0, s);
      v = slice(cache.values[layer], 2, 0, s);
    }
    // Grouped-query attention without copying K and V: query heads g*group .. g*group+group-1 share
    // KV head g (transformers' repeat_kv), so fold each group's heads into the row axis: [B,kvH,gT,hd]
    // (the mask's rows are tiled to match). One new token: [B,1,H,hd] already is that layout.
    q = t == 1 ? q.reshape(b, kvh, group, hd)
        : q.transpose(0, 2, 1, 3).reshape(b, kvh, (long) group * t, hd);
    NDArray scores = matmul(q, k).mul(scoreScale).add(mask);
    NDArray y = matmul(scores.softmax(-1), v); // [B,kvH,gT,hd]
    y = t == 1 ? y.reshape(b, 1, (long) h * hd)
        : y.reshape(b, h, t, hd).transpose(0, 2, 1, 3).reshape(b, t, (long) h * hd);
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
    NDArray rms = x.square().mean(new int[] {-1}, true).add(eps).sqrt();
    return x.div(rms).mul(weight);
  }

  /** cos and sin [B,T,1,hd] of positions [B,T,1], from the table (they broadcast over heads). */
  private NDArray[] rope(NDArray positions) {
    return new NDArray[] {
      Embedding.embedding(positions, ropeCos, SparseFormat.DENSE).singletonOrThrow(),
      Embedding.embedding(positions, ropeSin, SparseFormat.DENSE).singletonOrThrow()
    };
  }

  /** x * cos + rotate_half(x) * sin for x [B,T,heads,hd]; rotate_half(x) = [-x2, x1]. */
  private NDArray applyRope(NDArray x, NDArray[] rope) {
    NDArray rotated = Linear.linear(x, rotateHalf).singletonOrThrow();
    return x.mul(rope[0]).add(rotated.mul(rope[1]));
  }

  /**
   * The additive mask for scores [B,kvH,group*T,S]: query t (cache column past + t) sees key columns
   * up to its own, and none marked as padding (by {@code keyMask}, or by the cache's key mask). One
   * new token sees every earlier column: the padding alone, [B,1,1,S], broadcast over every row.
   */
  private NDArray attentionMask(NDManager m, NDArray keyMask, KvCache cache, int past, int t) {
    int s = past + t;
    NDArray pad = null; // [B,1,1,S], 0 or MASKED
    if (cache != null) {
      pad = slice(cache.padding, 3, 0, s);
    } else if (keyMask != null) {
      pad = keyMask.toType(DataType.FLOAT32, false).sub(1f).mul(-MASKED)
          .reshape(keyMask.getShape().get(0), 1, 1, s);
    }
    if (t == 1 && pad != null) {
      return pad;
    }
    float[] causal = new float[t * s];
    for (int i = 0; i < t; i++) {
      for (int j = past + i + 1; j < s; j++) {
        causal[i * s + j] = MASKED;
      }
    }
    NDArray mask = m.create(causal, new Shape(1, 1, t, s));
    if (pad != null) {
      mask = mask.add(pad);
    }
    int group = config.heads() / config.kvHeads();
    return group == 1 ? mask : mask.tile(new long[] {1, 1, group, 1}); // rows g*T + t
  }

  /**
   * a[..., from:to, ...] along {@code axis}, a view, in one JNI call (DJL's get(NDIndex) makes
   * five or six: an index object, one call per axis, the get, the delete).
   */
  private static NDArray slice(NDArray a, int axis, long from, long to) {
    return JniUtils.slice((PtNDArray) a, axis, from, to, 1);
  }

  /** Writes {@code value} into {@code a} at [from, to) along {@code axis}, in place, in one call. */
  private static void write(NDArray a, int axis, long from, long to, NDArray value) {
    long[] shape = a.getShape().getShape();
    long[] min = new long[shape.length];
    long[] max = shape.clone();
    long[] step = new long[shape.length];
    java.util.Arrays.fill(step, 1);
    min[axis] = from;
    max[axis] = to;
    JniUtils.indexSet((PtNDArray) a, (PtNDArray) value, min, max, step);
  }

  /** a b for 4-d activations, without DJL's matMul shape checks (a JNI call per operand). */
  private static NDArray matmul(NDArray a, NDArray b) {
    return JniUtils.matmul((PtNDArray) a, (PtNDArray) b);
  }

  /**
   * Keys and values of earlier positions, one preallocated pair per layer: keys [B,kvH,hd,capacity]
   * (transposed: q k^T needs no transpose per step), values [B,kvH,capacity,hd]; and which columns
   * are padding, as an additive [B,1,1,capacity] mask (0 or MASKED).
   */
  public static final class KvCache {
    final NDArray[] keys;
    final NDArray[] values;
    NDArray padding;
    int length;

    KvCache(NDManager manager, HfConfig c, int rows, int capacity, int[] keyMask) {
      if (keyMask.length != rows * capacity) {
        throw new IllegalArgumentException(keyMask.length + " key mask entries for " + rows
            + " rows of " + capacity);
      }
      keys = new NDArray[c.layers()];
      values = new NDArray[c.layers()];
      for (int i = 0; i < c.layers(); i++) {
        keys[i] = manager.zeros(new Shape(rows, c.kvHeads(), c.headDim(), capacity));
        values[i] = manager.zeros(new Shape(rows, c.kvHeads(), capacity, c.headDim()));
      }
      float[] pad = new float[keyMask.length];
      for (int i = 0; i < pad.length; i++) {
        pad[i] = keyMask[i] == 1 ? 0 : MASKED;
      }
      padding = manager.create(pad, new Shape(rows, 1, 1, capacity));
    }

    private KvCache(NDArray[] keys, NDArray[] values, NDArray padding, int length) {
      this.keys = keys;
      this.values = values;
      this.padding = padding;
      this.length = length;
    }

    public int length() {
      return length;
    }

    /**
     * Rows [from, to) as a cache of their own whose arrays are views of these, so that what a
     * pass writes there lands here (a chunk's prefill in groups of rows). Its length starts at
     * this one's and grows alone: the caller sets this one's when every group is written.
     */
    KvCache rows(int from, int to) {
      NDArray[] k = new NDArray[keys.length];
      NDArray[] v = new NDArray[values.length];
      for (int i = 0; i < k.length; i++) {
        k[i] = slice(keys[i], 0, from, to);
        v[i] = slice(values[i], 0, from, to);
      }
      return new KvCache(k, v, slice(padding, 0, from, to), length);
    }

    /** Keeps only the rows at {@code index} (int, along the batch axis), freeing the old arrays. */
    public void keepRows(NDArray index) {
      for (int i = 0; i < keys.length; i++) {
        keys[i] = take(keys[i], index);
        values[i] = take(values[i], index);
      }
      padding = take(padding, index);
    }

    private static NDArray take(NDArray a, NDArray index) {
      NDArray kept = a.get(new NDIndex("{}", index));
      a.close();
      return kept;
    }
  }
}
