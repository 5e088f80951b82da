package whale.task.searchqa;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import whale.store.ArtifactStore;
import whale.task.LoadedSplits;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * Search question answering: questions answered by retrieving documents with the {@code search}
 * tool (Lucene BM25) and having the model read the answer off them. Built in: an invented fact world
 * ({@link FactWorld}) with one- and two-hop questions. Loaded: SearchQA / NQ / HotpotQA-style JSONL
 * ({@link QaJsonl}) over a user-supplied corpus whose index is cached in the artifact store
 * ({@link CorpusIndexCache}). Verifier: SQuAD-normalized exact match against any gold answer
 * ({@link AnswerMatch}), optionally with an LLM judge for what exact match rejects.
 */
public final class SearchQaTask implements Task {
  public static final String NAME = "searchqa";

  private final Map<Split, List<TaskProblem>> splits;
  private final Map<String, List<String>> golds;
  private final SearchIndex index;
  private final List<Tool> tools;
  private final AnswerJudge judge;

  private SearchQaTask(Map<Split, List<TaskProblem>> splits, Map<String, List<String>> golds,
      SearchIndex index, AnswerJudge judge) {
    this.splits = splits;
    this.golds = golds;
    this.index = index;
    this.tools = List.of(new SearchTool(index));
    this.judge = judge;
  }

  /** The built-in task: a fact world seeded by {@code seed} and disjoint splits of its questions. */
  public static SearchQaTask builtin(long seed, int weight, int harness, int test) {
    if (weight < 0 || harness < 0 || test < 0) {
      throw new IllegalArgumentException("split sizes must be >= 0");
    }
    FactWorld world = FactWorld.withQuestions(seed, weight + harness + test);
    List<FactWorld.Fact> facts = new ArrayList<>(world.facts());
    Collections.shuffle(facts, new Random(seed));
    Map<Split, List<TaskProblem>> splits = new EnumMap<>(Split.class);
    Map<String, List<String>> golds = new HashMap<>();
    int[] sizes = {weight, harness, test};
    Split[] order = {Split.WEIGHT, Split.HARNESS, Split.TEST};
    int next = 0;
    for (int s = 0; s < order.length; s++) {
      List<TaskProblem> list = new ArrayList<>(sizes[s]);
      for (int i = 0; i < sizes[s]; i++) {
        FactWorld.Fact f = facts.get(next++);
        list.add(new TaskProblem(id(order[s], i), f.question(), f.answer()));
        golds.put(f.question(), List.of(f.answer()));
      }
      splits.put(order[s], List.copyOf(list));
    }
    List<SearchIndex.Entry> entries = new ArrayList<>();
    for (FactWorld.Doc d : world.docs()) {
      entries.add(new SearchIndex.Entry("doc-" + entries.size(), d.title(), d.text()));
    }
    return new SearchQaTask(splits, golds, SearchIndex.inMemory(entries), null);
  }

  /**
   * The task over dataset files: D_weight and D_harness from {@code trainFile}, D_test from
   * {@code testFile} (or from the train file when null), the search tool over {@code corpusFile}.
   *
   * @param store where the corpus index is cached; null builds it in memory (nothing cached)
   */
  public static SearchQaTask load(Path trainFile, Path testFile, Path corpusFile, long seed, int weight,
      int harness, int test, ArtifactStore store, AnswerJudge judge) {
    Map<String, List<String>> golds = new HashMap<>();
    List<TaskProblem> train = problems(QaJsonl.readQuestions(trainFile), golds);
    List<TaskProblem> testProblems = testFile == null ? null : problems(QaJsonl.readQuestions(testFile), golds);
    String source = trainFile + (testFile == null ? "" : " and " + testFile);
    Map<Split, List<TaskProblem>> parts = LoadedSplits.partition(train, testProblems, seed, weight, harness,
        test, source);
    Map<Split, List<TaskProblem>> splits = new EnumMap<>(Split.class);
    for (Map.Entry<Split, List<TaskProblem>> e : parts.entrySet()) {
      List<TaskProblem> list = new ArrayList<>();
      for (TaskProblem p : e.getValue()) {
        list.add(new TaskProblem(id(e.getKey(), list.size()), p.question(), p.answer()));
      }
      splits.put(e.getKey(), List.copyOf(list));
    }
    SearchIndex index;
    if (store == null) {
      List<SearchIndex.Entry> entries = new ArrayList<>();
      QaJsonl.readCorpus(corpusFile, entries::add);
      index = SearchIndex.inMemory(entries);
    } else {
      index = CorpusIndexCache.open(store, corpusFile).index();
    }
    return new SearchQaTask(splits, golds, index, judge);
  }

  /** The same task, its verifier backed by {@code judge} where exact match fails. */
  public static SearchQaTask withJudge(SearchQaTask task, AnswerJudge judge) {
    return new SearchQaTask(task.splits, task.golds, task.index, judge);
  }

  private static List<TaskProblem> problems(List<QaJsonl.Question> questions, Map<String, List<String>> golds) {
    List<TaskProblem> out = new ArrayList<>();
    for (QaJsonl.Question q : questions) {
      // the first line with a question defines its answers (LoadedSplits keeps that one too)
      golds.putIfAbsent(q.question(), q.answers());
      out.add(new TaskProblem("", q.question(), q.answers().get(0)));
    }
    return out;
  }

  private static String id(Split s, int i) {
    return String.format("%s-%s-%04d", NAME, s.name().toLowerCase(), i);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<TaskProblem> split(Split split) {
    return splits.get(split);
  }

  /** Every gold answer of a problem (the reference answer when the task has no other). */
  public List<String> answers(TaskProblem problem) {
    return golds.getOrDefault(problem.question(), List.of(problem.answer()));
  }

  /**
   * 1.0 when the answer equals a gold answer after SQuAD normalization; otherwise, with a judge
   * configured, the judge's verdict.
   */
  @Override
  public double verify(TaskProblem problem, String answer) {
    List<String> gold = answers(problem);
    if (AnswerMatch.matches(answer, gold)) {
      return 1.0;
    }
    if (judge != null && answer != null && !AnswerMatch.normalize(answer).isEmpty()) {
      return judge.accepts(problem.question(), gold, answer) ? 1.0 : 0.0;
    }
    return 0.0;
  }

  @Override
  public List<Tool> tools() {
    return tools;
  }

  public SearchIndex index() {
    return index;
  }

  /**
   * Generic reading comprehension in the "D: document\nQ: question\nA: answer\n" format, one to three
   * documents of an invented world of its own (seeded by {@code seed}) with the answer a span of one
   * of them, one-hop questions only. A document whose question is in a split is skipped.
   */
  @Override
  public List<String> pretrainingCorpus(long seed, int documents) {
    Set<String> taken = new HashSet<>(golds.keySet());
    FactWorld world = new FactWorld(seed ^ 0x5EA2C4L, Math.max(8, Math.min(1000, documents / 30)));
    List<FactWorld.Fact> oneHop = new ArrayList<>();
    for (FactWorld.Fact f : world.facts()) {
      if (f.hops() == 1 && !taken.contains(f.question())) {
        oneHop.add(f);
      }
    }
    List<FactWorld.Doc> docs = world.docs();
    Random rnd = new Random(seed ^ 0x5DEECE66DL);
    List<String> out = new ArrayList<>(documents);
    while (out.size() < documents) {
      FactWorld.Fact f = oneHop.get(rnd.nextInt(oneHop.size()));
      int roll = rnd.nextInt(10);
      int n = roll < 5 ? 1 : roll < 9 ? 2 : 3;
      List<String> shown = new ArrayList<>();
      shown.add(f.evidence());
      while (shown.size() < n) {
        String d = docs.get(rnd.nextInt(docs.size())).text();
        if (!shown.contains(d)) {
          shown.add(d);
        }
      }
      Collections.shuffle(shown, rnd);
      StringBuilder b = new StringBuilder();
      for (String d : shown) {
        b.append("D: ").append(d).append('\n');
      }
      b.append("Q: ").append(f.question()).append("\nA: ").append(f.answer()).append('\n');
      out.add(b.toString());
    }
    return out;
  }
}
