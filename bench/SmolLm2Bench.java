import ai.djl.ndarray.NDManager;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import whale.model.CpuPins;
import whale.model.hf.HfModel;
import whale.model.hf.KvSampler;
import whale.model.hf.LlamaDecoder;
import whale.model.hf.Sampling;
import whale.model.hf.SftTrainer;

/**
 * whale's side of bench/smollm2-bench.sh: on the batch smollm2_bench.py wrote (64 chat-rendered
 * prompts as token ids, 16 SFT rows), new tokens/s of the KV-cache sampler (64 new tokens each,
 * greedy, no stop) and tokens/s of one LoRA SFT step (rank 16 on q/k/v/o, AdamW, clipping at 1.0).
 * Best of REPEATS after one warm-up. Not a test.
 */
public class SmolLm2Bench {
  static final int NEW = 64;
  static final int REPEATS = Integer.getInteger("whale.bench.repeats", 3);

  public static void main(String[] args) throws Exception {
    JsonNode data = new ObjectMapper().readTree(Path.of(args[1]).toFile());
    try (HfModel m = HfModel.load(Path.of(args[0]), List.of())) {
      LlamaDecoder d = m.decoder();
      List<KvSampler.Row> rows = new ArrayList<>();
      for (JsonNode p : data.get("prompts")) {
        rows.add(new KvSampler.Row(ids(p), rows.size(), NEW));
      }
      double gen;
      try (NDManager nm = NDManager.newBaseManager()) {
        gen = best(() -> KvSampler.sample(d, nm, rows, Sampling.GREEDY, Set.of(), 0,
            KvSampler.Stop.NEVER));
      }
      List<SftTrainer.Example> batch = new ArrayList<>();
      int tokens = 0;
      for (JsonNode r : data.get("sft")) {
        int[] p = ids(r.get("prompt"));
        int[] c = ids(r.get("completion"));
        batch.add(SftTrainer.Example.of(p, c));
        tokens += p.length + c.length;
      }
      m.trainLora(new HfModel.LoraSpec(16, 32, List.of("q_proj", "k_proj", "v_proj", "o_proj")), 1);
      double sft = best(() -> m.trainer().step(batch, 1e-4f));
      System.out.printf("whale (%s): kv_new_tok_s=%.1f (%.2f s) lora_sft_tok_s=%.1f (%.2f s, %d tokens)%n",
          CpuPins.describe(), rows.size() * NEW / gen, gen, tokens / sft, sft, tokens);
    }
  }

  static int[] ids(JsonNode a) {
    int[] out = new int[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).asInt();
    }
    return out;
  }

  static double best(Runnable fn) {
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
