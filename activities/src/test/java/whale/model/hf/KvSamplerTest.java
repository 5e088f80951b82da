package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import whale.model.Completion;
import whale.model.GenerationRequest;

/** KV-cache sampling: transformers' greedy tokens, batch invariance, and the sampling filters. */
class KvSamplerTest {
  private static HfModel qwen2;

  @BeforeAll
  static void load() throws Exception {
    qwen2 = HfModel.load(HfFixtures.dir("qwen2"), List.of());
  }

  @AfterAll
  static void close() {
    qwen2.close();
  }

  /** All fixture prompts in one batch (different lengths, left-padded) against generate's tokens. */
  @ParameterizedTest
  @ValueSource(strings = {"llama", "llama3", "qwen2", "qwen3", "mistral"})
  void greedyMatchesTransformersInOneBatch(String model) throws Exception {
    JsonNode g = HfFixtures.golden(model);
    try (HfModel m = HfModel.load(HfFixtures.dir(model), List.of(), HfFixtures.placement("float32"))) {
      assertEquals(HfFixtures.ints(g.path("eos")).length, m.tokenizer().eosIds().size());
      HfFixtures.assertGreedyIsGolden(m, g, model);
    }
  }

  @Test
  void stopsAtEosAndKeepsIt() throws Exception {
    // llama's 4th golden continuation ends at EOS (id 2) after 7 tokens
    JsonNode g = HfFixtures.golden("llama");
    int[] golden = HfFixtures.ints(g.path("greedy").get(3));
    assertTrue(golden.length < 12 && golden[golden.length - 1] == 2, Arrays.toString(golden));
    try (HfModel m = HfModel.load(HfFixtures.dir("llama"), List.of())) {
      int[] prompt = HfFixtures.ints(g.path("prompts").get(3).path("ids"));
      int[][] out = m.generateIds(List.of(new KvSampler.Row(prompt, 0, 12)), Sampling.GREEDY);
      assertArrayEquals(golden, out[0]);
      Completion c = m.generate(
          List.of(new GenerationRequest(g.path("prompts").get(3).path("text").asText(), 0, 12)),
          Sampling.GREEDY).get(0);
      assertEquals(golden.length, c.completionTokens());
      assertEquals(prompt.length, c.promptTokens());
      assertEquals(m.tokenizer().decode(Arrays.copyOf(golden, golden.length - 1)), c.text());
    }
  }

  @Test
  void sameRequestSameCompletionWhateverSharesTheBatch() {
    Sampling s = new Sampling(1.0, 20, 0.9);
    GenerationRequest probe = new GenerationRequest("The quick brown", 42, 16);
    Completion alone = qwen2.generate(List.of(probe), s).get(0);
    List<GenerationRequest> crowd = new ArrayList<>();
    crowd.add(new GenerationRequest("Question: who wrote the book? Answer: a much longer prompt", 7, 5));
    crowd.add(new GenerationRequest("e2e4", 8, 30));
    crowd.add(probe);
    crowd.add(new GenerationRequest("What is 3 + 4?", 9, 1));
    List<Completion> together = qwen2.generate(crowd, s);
    assertEquals(alone, together.get(2));
    assertTrue(alone.completionTokens() > 0, alone.toString());
    // and the seed matters: another seed gives another completion
    assertNotEquals(alone, qwen2.generate(List.of(new GenerationRequest("The quick brown", 43, 16)), s)
        .get(0));
  }

  /**
   * Chunks are cut by estimated native memory too: the cache of all their rows beside the prefill
   * of one row never over budget, never empty, at most CHUNK; the prefill then goes in even groups
   * that fit beside that cache.
   */
  @Test
  void chunksStayWithinTheMemoryBudget() throws Exception {
    HfConfig c = HfConfig.read(HfFixtures.dir("qwen2"));
    List<KvSampler.Row> rows = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      rows.add(new KvSampler.Row(new int[10 + i], i, 8));
    }
    Integer[] order = IntStream.range(0, rows.size()).boxed().toArray(Integer[]::new);
    long perToken = cacheBytes(c, 1);
    java.util.function.IntToLongFunction prefill = w -> prefillBytes(c, w);
    assertEquals(KvSampler.CHUNK, KvSampler.chunkEnd(c, rows, order, 0, Long.MAX_VALUE));
    assertEquals(1, KvSampler.chunkEnd(c, rows, order, 0, 1), "at least one row, whatever the budget");
    // rows 0..2 (padded to the third's 12 columns, 8 new) fit; a fourth needs 4 caches of 21
    long budget = 3 * 20 * perToken + prefill.applyAsLong(12);
    assertTrue(4 * 21 * perToken + prefill.applyAsLong(13) > budget);
    assertEquals(3, KvSampler.chunkEnd(c, rows, order, 0, budget));
    // from the middle: the count restarts there
    assertEquals(41, KvSampler.chunkEnd(c, rows, order, 40,
        2 * 59 * perToken + prefill.applyAsLong(51) - 1));

    // 60 rows of 30 columns (40 in the cache): room for 40 prefills beside the cache: 2 x 30
    long cache60 = 60 * 40 * perToken;
    assertEquals(30, KvSampler.prefillGroup(c, 60, 30, 40, cache60 + 40 * prefill.applyAsLong(30)));
    assertEquals(60, KvSampler.prefillGroup(c, 60, 30, 40, cache60 + 60 * prefill.applyAsLong(30)));
    assertEquals(20, KvSampler.prefillGroup(c, 60, 30, 40, cache60 + 29 * prefill.applyAsLong(30)));
    assertEquals(1, KvSampler.prefillGroup(c, 60, 30, 40, cache60), "at least one row");
    assertEquals(1, KvSampler.prefillGroup(c, 60, 30, 40, 1), "at least one row");
  }

  /**
   * A chunk prefilled one row at a time (each row writes its own rows of the shared cache) and
   * then decoded as one batch gives transformers' greedy tokens, as the whole-chunk prefill does.
   */
  @Test
  void prefillInGroupsWritesEachRowsCache() throws Exception {
    JsonNode g = HfFixtures.golden("llama");
    try (HfModel m = HfModel.load(HfFixtures.dir("llama"), List.of());
        ai.djl.ndarray.NDManager nd = ai.djl.ndarray.NDManager.newBaseManager()) {
      List<KvSampler.Row> rows = new ArrayList<>();
      int width = 0;
      for (JsonNode p : g.path("prompts")) {
        rows.add(new KvSampler.Row(HfFixtures.ints(p.path("ids")), 0, 12));
        width = Math.max(width, rows.get(rows.size() - 1).prompt().length);
      }
      HfConfig c = m.decoder().config();
      int n = rows.size();
      // every row in one chunk, prefilled one at a time
      long budget = n * cacheBytes(c, width + 12) + prefillBytes(c, width);
      Integer[] order = IntStream.range(0, n).boxed()
          .sorted(Comparator.comparingInt(i -> rows.get(i).prompt().length)).toArray(Integer[]::new);
      assertEquals(n, KvSampler.chunkEnd(c, rows, order, 0, budget));
      assertEquals(1, KvSampler.prefillGroup(c, n, width, width + 12, budget));
      int[][] ours = KvSampler.sample(m.decoder(), nd, rows, Sampling.GREEDY,
          new java.util.LinkedHashSet<>(m.tokenizer().eosIds()), m.tokenizer().padId(),
          KvSampler.Stop.NEVER, budget);
      for (int i = 0; i < n; i++) {
        assertArrayEquals(HfFixtures.ints(g.path("greedy").get(i)), ours[i], "prompt " + i);
      }
    }
  }

  /** One row's KV cache of {@code columns} positions, written out here as the budget's oracle. */
  private static long cacheBytes(HfConfig c, int columns) {
    return 2L * c.layers() * c.kvHeads() * c.headDim() * Float.BYTES * columns;
  }

  /** One row's prefill over w columns: one layer's activations and four [heads, w, w] float arrays. */
  private static long prefillBytes(HfConfig c, int w) {
    return (5L * c.intermediateSize() + 12L * c.hiddenSize()) * Float.BYTES * w
        + 4L * c.heads() * w * w * Float.BYTES;
  }

  @Test
  void topKOneAndTinyTopPAreGreedy() {
    List<GenerationRequest> reqs = List.of(new GenerationRequest("What is 3 + 4?", 1, 10),
        new GenerationRequest("e2e4 e7e5 g1f3", 2, 10));
    List<Completion> greedy = qwen2.generate(reqs, Sampling.GREEDY);
    assertEquals(greedy, qwen2.generate(reqs, new Sampling(1.0, 1, 1.0)));
    assertEquals(greedy, qwen2.generate(reqs, new Sampling(0.7, 0, 1e-6)));
    assertNotEquals(greedy, qwen2.generate(reqs, new Sampling(1.5, 0, 1.0)));
  }

  /** First-token frequencies over many seeds against softmax of transformers' logits. */
  @Test
  void drawsFollowTheFilteredDistribution() {
    JsonNode g = HfFixtures.golden("qwen2");
    int[] prompt = HfFixtures.ints(g.path("prompts").get(0).path("ids"));
    float[] logits = HfFixtures.floats(g.path("lastLogits").get(0));
    Integer[] rank = IntStream.range(0, logits.length).boxed().toArray(Integer[]::new);
    Arrays.sort(rank, Comparator.comparingDouble(i -> -logits[i]));
    int draws = 3000;
    // top-k 5 at temperature 2
    double[] p = new double[5];
    double z = 0;
    for (int i = 0; i < 5; i++) {
      p[i] = Math.exp((logits[rank[i]] - logits[rank[0]]) / 2.0);
      z += p[i];
    }
    int[] counts = firstTokenCounts(prompt, draws, new Sampling(2.0, 5, 1.0), logits.length);
    int inTop = 0;
    for (int i = 0; i < 5; i++) {
      double freq = counts[rank[i]] / (double) draws;
      assertEquals(p[i] / z, freq, 0.035, "token " + rank[i] + " of rank " + i);
      inTop += counts[rank[i]];
    }
    assertEquals(draws, inTop, "every draw is one of the top 5");
    // top-p 0.5 at temperature 1: only the nucleus, in proportion
    double[] q = new double[logits.length];
    double zq = 0;
    for (int i = 0; i < q.length; i++) {
      q[i] = Math.exp(logits[rank[i]] - logits[rank[0]]);
      zq += q[i];
    }
    int nucleus = 0;
    for (double mass = 0; mass < 0.5; nucleus++) {
      mass += q[nucleus] / zq;
    }
    int[] nc = firstTokenCounts(prompt, draws, new Sampling(1.0, 0, 0.5), logits.length);
    double kept = 0;
    for (int i = 0; i < nucleus; i++) {
      kept += q[i];
    }
    int total = 0;
    for (int i = 0; i < nucleus; i++) {
      total += nc[rank[i]];
      assertEquals(q[i] / kept, nc[rank[i]] / (double) draws, 0.035, "nucleus rank " + i);
    }
    assertEquals(draws, total, "no draw outside the " + nucleus + "-token nucleus");
    assertTrue(nucleus > 1, "the test needs a nucleus of several tokens");
  }

  private static int[] firstTokenCounts(int[] prompt, int draws, Sampling s, int vocab) {
    List<KvSampler.Row> rows = new ArrayList<>();
    for (int i = 0; i < draws; i++) {
      rows.add(new KvSampler.Row(prompt, 1000L + i, 1));
    }
    int[] counts = new int[vocab];
    for (int[] out : qwen2.generateIds(rows, s)) {
      counts[out[0]]++;
    }
    return counts;
  }

  @Test
  void stopStringEndsTheCompletionAndIsKept() throws Exception {
    JsonNode g = HfFixtures.golden("qwen3");
    String prompt = g.path("prompts").get(1).path("text").asText();
    try (HfModel free = HfModel.load(HfFixtures.dir("qwen3"), List.of())) {
      String full = free.generate(List.of(new GenerationRequest(prompt, 0, 12)), Sampling.GREEDY)
          .get(0).text();
      assertTrue(full.length() > 6, full);
      String stop = full.substring(3, 5);
      int expectedEnd = full.indexOf(stop) + stop.length();
      try (HfModel stopping = HfModel.load(HfFixtures.dir("qwen3"), List.of(stop))) {
        Completion c = stopping.generate(List.of(new GenerationRequest(prompt, 0, 12)),
            Sampling.GREEDY).get(0);
        assertEquals(full.substring(0, expectedEnd), c.text());
        assertTrue(c.completionTokens() < 12, c.toString());
      }
    }
  }

  @Test
  void longPromptLosesItsLeftEnd() {
    String prompt = "The quick brown fox jumps over the lazy dog. ".repeat(60);
    int[] ids = qwen2.promptIds(prompt);
    assertTrue(ids.length > 256, "longer than the fixture's 256 positions: " + ids.length);
    Completion c = qwen2.generate(List.of(new GenerationRequest(prompt, 0, 8)), Sampling.GREEDY)
        .get(0);
    assertEquals(256 - 8, c.promptTokens());
    assertFalse(c.text().isEmpty());
  }
}
