import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import whale.model.hf.HfModel;
import whale.model.hf.KvSampler;
import whale.model.hf.LlamaDecoder;
import whale.model.hf.Sampling;
import whale.model.hf.SftTrainer;

/**
 * whale's side of bench/hf-bench.sh on Hugging Face model directories: new tokens/s of the KV-cache
 * sampler and of the no-cache loop it replaces (every step recomputes the whole prefix, as the
 * built-in model's sampler does), batch 64, 32-token prompts, 64 new tokens, greedy; and SFT
 * tokens/s of one full fine-tuning step (16 rows of 96 tokens). Best of 3 after a warm-up (the no-cache loop: one run). Not a test.
 * {@code -Dwhale.bench.device=cuda} (bench/gpu-check): on the GPU, float32.
 */
public class HfBench {
  static final int BATCH = 64, PROMPT = 32, NEW = 64, SFT_ROWS = 16, SFT_LEN = 96;

  public static void main(String[] args) throws Exception {
    String device = System.getProperty("whale.bench.device", "cpu");
    HfModel.Placement placement = HfModel.Placement.of("float32", device);
    for (String dir : args) {
      try (HfModel m = HfModel.load(Path.of(dir), List.of(), placement)) {
        LlamaDecoder d = m.decoder();
        SplittableRandom rng = new SplittableRandom(1);
        int vocab = d.config().vocabSize();
        List<KvSampler.Row> rows = new ArrayList<>();
        int[][] prompts = new int[BATCH][PROMPT];
        for (int r = 0; r < BATCH; r++) {
          for (int t = 0; t < PROMPT; t++) {
            prompts[r][t] = 3 + rng.nextInt(vocab - 3);
          }
          rows.add(new KvSampler.Row(prompts[r], r, NEW));
        }
        try (NDManager nm = NDManager.newBaseManager(
            placement.device() == HfModel.Placement.Device.CUDA ? Device.gpu() : Device.cpu())) {
          double kv = best(() -> KvSampler.sample(d, nm, rows, Sampling.GREEDY, Set.of(), 0,
              KvSampler.Stop.NEVER));
          double noCache = once(() -> noCache(d, nm, prompts)); // slow: one run, the JIT is warm

          List<SftTrainer.Example> batch = new ArrayList<>();
          for (int r = 0; r < SFT_ROWS; r++) {
            int[] p = new int[PROMPT];
            int[] c = new int[SFT_LEN - PROMPT];
            for (int i = 0; i < p.length; i++) p[i] = 3 + rng.nextInt(vocab - 3);
            for (int i = 0; i < c.length; i++) c[i] = 3 + rng.nextInt(vocab - 3);
            batch.add(SftTrainer.Example.of(p, c));
          }
          m.trainFull();
          double sft = best(() -> m.trainer().step(batch, 1e-4f));
          long params = d.weights().values().stream().mapToLong(NDArray::size).sum();
          System.out.printf("whale %s device=%s params=%d kv_new_tok_s=%.0f nocache_new_tok_s=%.0f sft_tok_s=%.0f%n",
              Path.of(dir).getFileName(), device, params, BATCH * NEW / kv, BATCH * NEW / noCache,
              SFT_ROWS * (SFT_LEN - 1) / sft);
        }
      }
    }
  }

  /** Greedy decoding that runs the whole sequence through the decoder for every new token. */
  static void noCache(LlamaDecoder d, NDManager nm, int[][] prompts) {
    int n = prompts.length;
    int[][] seq = new int[n][PROMPT + NEW];
    for (int r = 0; r < n; r++) System.arraycopy(prompts[r], 0, seq[r], 0, PROMPT);
    for (int len = PROMPT; len < PROMPT + NEW; len++) {
      try (NDManager sub = nm.newSubManager(); NDScope scope = new NDScope()) {
        int[] flat = new int[n * len];
        int[] pos = new int[n * len];
        for (int r = 0; r < n; r++) {
          System.arraycopy(seq[r], 0, flat, r * len, len);
          for (int t = 0; t < len; t++) pos[r * len + t] = t;
        }
        NDArray h = d.hidden(sub.create(flat, new Shape(n, len)), sub.create(pos, new Shape(n, len)), null, null);
        int[] next = d.logits(h.get(new NDIndex(":, {}", len - 1))).argMax(-1)
            .toType(DataType.INT32, false).toIntArray();
        for (int r = 0; r < n; r++) seq[r][len] = next[r];
      }
    }
  }

  static double once(Runnable fn) {
    long t = System.nanoTime();
    fn.run();
    return (System.nanoTime() - t) / 1e9;
  }

  /** Repeats of each timed run (hf-bench.sh passes the same to both sides): REPEATS, default 10. */
  static final int REPEATS = Integer.getInteger("whale.bench.repeats", 10);

  /** Best of REPEATS after two warm-up runs (the JIT compiles the per-token path on the way). */
  static double best(Runnable fn) {
    fn.run();
    fn.run();
    double bestS = Double.MAX_VALUE;
    for (int i = 0; i < REPEATS; i++) {
      long t = System.nanoTime();
      fn.run();
      bestS = Math.min(bestS, (System.nanoTime() - t) / 1e9);
    }
    return bestS;
  }
}
