package whale.model.hf;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Batched sampling with a KV cache: the prompts of a chunk, left-padded to a common width, go
 * through the decoder once (prefill); then each step feeds one new token per row and attends to the
 * cache. Padding is masked out of every key set and positions count real tokens only, so a row's
 * logits are those it would get alone (up to float summation order).
 *
 * <p>Filtering and the draw happen on the device; Java only sends one uniform per row and gets one
 * id per row back. Each row draws from its own {@code SplittableRandom(seed)}, one uniform per
 * token, so a completion does not depend on what else shares the batch.
 */
public final class KvSampler {
  /** Most rows sampled together. */
  static final int CHUNK = 64;

  /**
   * Native bytes a chunk may take ({@code whale.hf.sampleMb}, default 512): its KV cache (float32,
   * every layer, prompt plus new tokens) for all its rows, and the prefill of a group of them: one
   * layer's activations (five [width, intermediate] arrays of the SwiGLU MLP, about twelve [width,
   * hidden] ones around them) and the attention scores (about four [heads, width, width] float
   * arrays per row: scores, mask, softmax, its product). Long chat conversations of SmolLM2-135M
   * (46 KB of cache and 59 KB of activations per token) would otherwise need 1.8 GB for 64 rows of
   * 600 tokens.
   */
  static final long CHUNK_BYTES = Long.getLong("whale.hf.sampleMb", 512) * 1024 * 1024;

  /** One sequence to continue: prompt ids, seed of its sampling stream, most tokens to add. */
  public record Row(int[] prompt, long seed, int maxNewTokens) {}

  /** Extra stop test after each token (e.g. a stop string); {@code generated} holds {@code count} ids. */
  public interface Stop {
    boolean test(int row, int[] generated, int count);

    Stop NEVER = (row, generated, count) -> false;
  }

  private KvSampler() {}

  /**
   * The new tokens of each row, in input order. A row ends at one of {@code eos} (kept, as
   * transformers' generate keeps it), when {@code stop} says so, or after its maxNewTokens.
   */
  public static int[][] sample(LlamaDecoder decoder, NDManager manager, List<Row> rows,
      Sampling sampling, Set<Integer> eos, int padId, Stop stop) {
    return sample(decoder, manager, rows, sampling, eos, padId, stop, CHUNK_BYTES);
  }

  /** As the public one, chunks and prefill groups cut to {@code budget} native bytes. */
  static int[][] sample(LlamaDecoder decoder, NDManager manager, List<Row> rows,
      Sampling sampling, Set<Integer> eos, int padId, Stop stop, long budget) {
    int maxPos = decoder.config().maxPositions();
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      if (r.prompt().length == 0) {
        throw new IllegalArgumentException("row " + i + ": empty prompt");
      }
      if (r.prompt().length + Math.max(0, r.maxNewTokens()) > maxPos) {
        throw new IllegalArgumentException("row " + i + ": " + r.prompt().length + " prompt + "
            + r.maxNewTokens() + " new tokens exceed max_position_embeddings " + maxPos);
      }
    }
    int[][] out = new int[rows.size()][];
    // Similar lengths together means less padding; the order cannot change any row's result.
    Integer[] order = new Integer[rows.size()];
    Arrays.setAll(order, i -> i);
    Arrays.sort(order, Comparator.comparingInt(i -> rows.get(i).prompt().length));
    // No autograd while sampling. libtorch's grad mode is per thread and on by default; DJL turns it
    // off only on the thread that started the engine. With LoRA adapters (which require grad) the
    // KV cache, written in place, then chained every step's graph: sampling 128 rollouts from an
    // RSFT step's SmolLM2-135M held 7 GB of activations until the chunk ended.
    boolean grad = JniUtils.isGradMode();
    JniUtils.setGradMode(false);
    try {
      for (int from = 0; from < order.length; ) {
        int to = chunkEnd(decoder.config(), rows, order, from, budget);
        Integer[] chunk = Arrays.copyOfRange(order, from, to);
        try (NDManager sub = manager.newSubManager()) {
          sampleChunk(decoder, sub, rows, chunk, sampling, eos, padId, stop, budget, out);
        }
        from = to;
      }
    } finally {
      JniUtils.setGradMode(grad);
    }
    return out;
  }

  /**
   * The end of the chunk that starts at {@code from} (rows in {@code order}, shortest prompt first):
   * at most {@link #CHUNK} rows whose KV cache, with the prefill of one row beside it, stays within
   * {@code budget}; always at least one row. The prefill then runs in groups that fit
   * ({@link #prefillGroup}), and the decode steps run all rows of the chunk together: every decode
   * step reads all the weights once, whatever its rows. A budget that counted every row's prefill
   * at once cut 64 chat prompts of SmolLM2-135M into 56 rows and 8, and the 8-row chunk's products
   * took 13 % of the sampling's op time (bench/README.md).
   */
  static int chunkEnd(HfConfig c, List<Row> rows, Integer[] order, int from, long budget) {
    int width = 0;
    int maxNew = 0;
    int to = from;
    while (to < order.length && to - from < CHUNK) {
      Row r = rows.get(order[to]);
      int w = Math.max(width, r.prompt().length);
      int n = Math.max(maxNew, Math.max(0, r.maxNewTokens()));
      if (to > from && (to - from + 1) * cacheBytes(c, w + n) + prefillBytes(c, w) > budget) {
        break;
      }
      width = w;
      maxNew = n;
      to++;
    }
    return to;
  }

  /**
   * Rows prefilled together in a chunk of {@code rows} rows, {@code width} prompt columns and
   * {@code capacity} cache columns: as many as fit {@code budget} beside the whole chunk's cache,
   * at least one, split evenly (60 rows that fit 40 at a time go as two groups of 30).
   */
  static int prefillGroup(HfConfig c, int rows, int width, int capacity, long budget) {
    long room = budget - rows * cacheBytes(c, capacity);
    int most = (int) Math.max(1, Math.min(rows, room / prefillBytes(c, width)));
    int groups = (rows + most - 1) / most;
    return (rows + groups - 1) / groups;
  }

  /** One row's KV cache of {@code columns} positions, float32, every layer. */
  private static long cacheBytes(HfConfig c, int columns) {
    return 2L * c.layers() * c.kvHeads() * c.headDim() * Float.BYTES * columns;
  }

  /** One row's prefill over {@code width} columns: one layer's activations and its scores. */
  private static long prefillBytes(HfConfig c, int width) {
    return (5L * c.intermediateSize() + 12L * c.hiddenSize()) * Float.BYTES * width
        + 4L * c.heads() * width * width * Float.BYTES;
  }

  private static void sampleChunk(LlamaDecoder decoder, NDManager m, List<Row> rows,
      Integer[] chunk, Sampling sampling, Set<Integer> eos, int padId, Stop stop, long budget,
      int[][] out) {
    int n = chunk.length;
    int width = 0;
    int maxNew = 0;
    for (Integer i : chunk) {
      width = Math.max(width, rows.get(i).prompt().length);
      maxNew = Math.max(maxNew, Math.max(0, rows.get(i).maxNewTokens()));
    }
    int[][] generated = new int[n][];
    int[] count = new int[n];
    boolean[] done = new boolean[n];
    SplittableRandom[] rng = new SplittableRandom[n];
    int[] flat = new int[n * width];
    int[] positions = new int[n * width];
    int capacity = width + maxNew;
    int[] keyMask = new int[n * capacity];
    for (int r = 0; r < n; r++) {
      Row row = rows.get(chunk[r]);
      int len = row.prompt().length;
      int offset = width - len; // left padding: every row's last prompt token is at column width-1
      Arrays.fill(flat, r * width, r * width + offset, padId);
      System.arraycopy(row.prompt(), 0, flat, r * width + offset, len);
      for (int t = 0; t < len; t++) {
        positions[r * width + offset + t] = t;
        keyMask[r * capacity + offset + t] = 1;
      }
      for (int c = width; c < capacity; c++) {
        keyMask[r * capacity + c] = 1; // generated columns are real for every row still running
      }
      generated[r] = new int[Math.max(0, row.maxNewTokens())];
      rng[r] = new SplittableRandom(row.seed());
      done[r] = row.maxNewTokens() <= 0;
    }
    if (allDone(done)) {
      finish(chunk, generated, count, out);
      return;
    }
    LlamaDecoder.KvCache cache = decoder.newCache(m, n, capacity, keyMask);
    int[] live = IntStream.range(0, n).toArray(); // chunk rows still on the device, in device order
    int[] next = new int[n];
    // The prefill in groups of rows, each writing its rows of the cache (a bounded peak); the
    // decode steps below run every row at once.
    int group = prefillGroup(decoder.config(), n, width, capacity, budget);
    for (int g = 0; g < n; g += group) {
      int end = Math.min(n, g + group);
      try (NDScope scope = new NDScope()) {
        Shape shape = new Shape(end - g, width);
        NDArray tokens = m.create(Arrays.copyOfRange(flat, g * width, end * width), shape);
        NDArray pos = m.create(Arrays.copyOfRange(positions, g * width, end * width), shape);
        NDArray h = decoder.hidden(tokens, pos, null, cache.rows(g, end));
        NDArray logits = decoder.logits(h.get(new NDIndex(":, {}", width - 1)));
        int[] ids = choose(logits, sampling, uniforms(rng, Arrays.copyOfRange(live, g, end)));
        System.arraycopy(ids, 0, next, g, ids.length);
      }
    }
    cache.length = width;
    for (int step = 0; ; step++) {
      int finished = 0;
      for (int i = 0; i < live.length; i++) {
        int r = live[i];
        if (!done[r]) {
          generated[r][count[r]++] = next[i];
          done[r] = eos.contains(next[i]) || count[r] == generated[r].length
              || stop.test(chunk[r], generated[r], count[r]);
        }
        finished += done[r] ? 1 : 0;
      }
      if (finished == live.length) {
        break;
      }
      if (finished > 0) { // drop finished rows from the cache: later steps compute only live ones
        int[] was = live;
        int[] keep = IntStream.range(0, was.length).filter(i -> !done[was[i]]).toArray();
        NDArray index = m.create(keep);
        cache.keepRows(index);
        index.close();
        live = Arrays.stream(keep).map(i -> was[i]).toArray();
      }
      int[] feed = new int[live.length];
      int[] feedPos = new int[live.length];
      for (int i = 0; i < live.length; i++) {
        int r = live[i];
        feed[i] = generated[r][count[r] - 1];
        feedPos[i] = rows.get(chunk[r]).prompt().length + step;
      }
      try (NDScope scope = new NDScope()) {
        NDArray tokens = m.create(feed, new Shape(live.length, 1));
        NDArray pos = m.create(feedPos, new Shape(live.length, 1));
        NDArray h = decoder.hidden(tokens, pos, null, cache);
        next = choose(decoder.logits(h.squeeze(1)), sampling, uniforms(rng, live));
      }
    }
    finish(chunk, generated, count, out);
  }

  private static void finish(Integer[] chunk, int[][] generated, int[] count, int[][] out) {
    for (int r = 0; r < chunk.length; r++) {
      out[chunk[r]] = Arrays.copyOf(generated[r], count[r]);
    }
  }

  private static boolean allDone(boolean[] done) {
    for (boolean d : done) {
      if (!d) {
        return false;
      }
    }
    return true;
  }

  /** One uniform per device row, drawn from that row's own stream (one per token it samples). */
  private static float[] uniforms(SplittableRandom[] rng, int[] live) {
    float[] u = new float[live.length];
    for (int i = 0; i < live.length; i++) {
      u[i] = (float) rng[live[i]].nextDouble();
    }
    return u;
  }

  /**
   * The next token of each row of {@code logits} [B,V]: argmax at temperature 0; otherwise the
   * inverse CDF at {@code u[b]} of softmax(logits / T) restricted to the top-k, then to the top-p
   * nucleus. Only a [B,k] slice is sorted (topK), or the full row on the device when top-p alone
   * needs an order.
   */
  static int[] choose(NDArray logits, Sampling s, float[] u) {
    if (s.temperature() == 0) { // argmax's int64 ids as they are: no cast on the device
      long[] ids = logits.argMax(-1).toLongArray();
      int[] out = new int[ids.length];
      Arrays.setAll(out, i -> (int) ids[i]);
      return out;
    }
    NDManager m = logits.getManager();
    long vocab = logits.getShape().get(1);
    NDArray scaled = logits.div((float) s.temperature());
    NDArray values;
    NDArray ids = null; // null: candidates are the vocabulary in id order
    if (s.topK() > 0 && s.topK() < vocab) {
      NDList top = scaled.topK(s.topK(), -1, true, true);
      values = top.get(0);
      ids = top.get(1);
    } else if (s.topP() < 1) {
      ids = scaled.argSort(-1, false);
      values = scaled.gather(ids, -1);
    } else {
      values = scaled;
    }
    NDArray p = values.softmax(-1);
    if (s.topP() < 1) {
      // keep a candidate while the mass ranked above it is still short of topP (the first always)
      NDArray before = p.cumSum(-1).sub(p);
      p = p.mul(before.lt((float) s.topP()).toType(DataType.FLOAT32, false));
    }
    NDArray cdf = p.cumSum(-1);
    long k = cdf.getShape().get(1);
    NDArray total = cdf.get(new NDIndex(":, {}:", k - 1));
    NDArray target = m.create(u, new Shape(u.length, 1)).mul(total);
    NDArray pick = cdf.lt(target).toType(DataType.INT64, false).sum(new int[] {-1}, true)
        .clip(0, k - 1);
    NDArray chosen = ids == null ? pick : ids.gather(pick, -1);
    return chosen.toType(DataType.INT32, false).toIntArray();
  }
}
