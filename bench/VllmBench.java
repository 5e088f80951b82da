import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.SamplingParams;
import whale.model.hf.HfModel;
import whale.model.hf.HfTokenizer;
import whale.model.vllm.VllmClient;
import whale.model.vllm.VllmGenerator;

/**
 * whale's side of bench/vllm-bench.sh, on the batch smollm2_bench.py wrote: new tokens/s of whale
 * driving the vLLM server (VllmGenerator, the path every episode's model call takes with
 * rollouts.backend vllm) and of whale's own KV-cache sampler (HfModel.generate), the same 64
 * requests (chat, greedy, 64 new tokens at most, stopping at EOS). Best of REPEATS after one
 * warm-up. Not a test.
 *    java -cp ... bench/VllmBench.java MODEL_DIR IN.json URL SERVED_NAME
 */
public class VllmBench {
  static final int NEW = 64;
  static final int REPEATS = Integer.getInteger("whale.bench.repeats", 3);

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    JsonNode data = new ObjectMapper().readTree(Path.of(args[1]).toFile());
    List<GenerationRequest> requests = new ArrayList<>();
    try (HfTokenizer tok = HfTokenizer.load(dir)) {
      for (JsonNode p : data.get("prompts")) {
        int[] ids = new int[p.size()];
        for (int i = 0; i < ids.length; i++) {
          ids[i] = p.get(i).asInt();
        }
        String text = tok.decode(ids);
        if (!java.util.Arrays.equals(tok.encode(text), ids)) {
          throw new IllegalStateException("a prompt does not survive decode/encode: not the same requests");
        }
        requests.add(new GenerationRequest(text, requests.size(), NEW, true));
      }
      var vllm = new VllmGenerator(List.of(new VllmClient(args[2], Duration.ofMinutes(10))), args[3], tok,
          2048, List.of(), null, VllmGenerator.Adapters.NONE, 64, Duration.ofMinutes(1));
      report("whale driving vLLM", () -> vllm.generate(requests, SamplingParams.GREEDY));
      vllm.close();
    }
    if (!Boolean.getBoolean("whale.bench.skipLocal")) {
      try (HfModel m = HfModel.load(dir, List.of())) {
        report("whale's own sampler", () -> m.generate(requests, SamplingParams.GREEDY));
      }
    }
  }

  static void report(String what, Supplier<List<Completion>> fn) {
    fn.get();
    double best = Double.MAX_VALUE;
    int tokens = 0;
    for (int i = 0; i < REPEATS; i++) {
      long t = System.nanoTime();
      List<Completion> out = fn.get();
      best = Math.min(best, (System.nanoTime() - t) / 1e9);
      tokens = out.stream().mapToInt(Completion::completionTokens).sum();
    }
    System.out.printf("%s: new_tok_s=%.1f (%.2f s, %d tokens, %d requests)%n", what, tokens / best, best,
        tokens, 64);
  }
}
