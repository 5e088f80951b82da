package whale.eval;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import whale.harness.EpisodeResult;

/**
 * mean@k, pass@k and maj@k over problems with k samples each. A sample is correct when its reward is
 * above 0.5.
 *
 * @param problems problems counted
 * @param k most samples of any problem
 * @param rollouts samples counted over all problems
 * @param meanAtK mean over problems of the fraction of its samples that are correct
 * @param passAtK fraction of problems with at least one correct sample
 * @param majAtK fraction of problems whose majority answer is correct: answers are compared after
 *     trimming, null/blank answers do not vote, a tie goes to the answer that appeared first (lowest
 *     sample index), and a problem without any voting answer counts as wrong
 */
public record MeanAtK(int problems, int k, long rollouts, double meanAtK, double passAtK, double majAtK) {

  /** One problem's samples, rewards and answers index-aligned. */
  public record Samples(String problemId, List<Double> rewards, List<String> answers) {
    public Samples {
      if (rewards.size() != answers.size()) {
        throw new IllegalArgumentException("rewards and answers differ in length for " + problemId);
      }
      rewards = List.copyOf(rewards);
      answers = java.util.Collections.unmodifiableList(new ArrayList<>(answers));
    }
  }

  public static MeanAtK compute(List<Samples> perProblem) {
    int problems = 0;
    int k = 0;
    long rollouts = 0;
    double mean = 0;
    double pass = 0;
    double maj = 0;
    for (Samples s : perProblem) {
      int n = s.rewards().size();
      if (n == 0) {
        continue;
      }
      problems++;
      k = Math.max(k, n);
      rollouts += n;
      int correct = 0;
      for (double r : s.rewards()) {
        if (r > 0.5) {
          correct++;
        }
      }
      mean += (double) correct / n;
      pass += correct > 0 ? 1 : 0;
      maj += majorityCorrect(s) ? 1 : 0;
    }
    if (problems == 0) {
      return new MeanAtK(0, 0, 0, 0, 0, 0);
    }
    return new MeanAtK(problems, k, rollouts, mean / problems, pass / problems, maj / problems);
  }

  static boolean majorityCorrect(Samples s) {
    Map<String, int[]> votes = new LinkedHashMap<>(); // answer -> {count, first index}
    for (int i = 0; i < s.answers().size(); i++) {
      String a = s.answers().get(i);
      if (a == null || a.isBlank()) {
        continue;
      }
      final int idx = i;
      votes.computeIfAbsent(a.trim(), x -> new int[] {0, idx})[0]++;
    }
    int best = -1;
    int bestCount = 0;
    for (int[] v : votes.values()) {
      if (v[0] > bestCount || (v[0] == bestCount && v[1] < best)) {
        bestCount = v[0];
        best = v[1];
      }
    }
    return best >= 0 && s.rewards().get(best) > 0.5;
  }

  /** Groups episodes by problem id (first-seen order), sorted by sample index within a problem. */
  public static MeanAtK ofEpisodes(List<EpisodeResult> episodes) {
    Map<String, List<EpisodeResult>> by = new LinkedHashMap<>();
    for (EpisodeResult e : episodes) {
      by.computeIfAbsent(e.problemId(), x -> new ArrayList<>()).add(e);
    }
    List<Samples> samples = new ArrayList<>();
    for (Map.Entry<String, List<EpisodeResult>> en : by.entrySet()) {
      List<EpisodeResult> l = new ArrayList<>(en.getValue());
      l.sort(java.util.Comparator.comparingInt(EpisodeResult::sampleIndex));
      List<Double> r = new ArrayList<>();
      List<String> a = new ArrayList<>();
      for (EpisodeResult e : l) {
        r.add(e.reward());
        a.add(e.answer());
      }
      samples.add(new Samples(en.getKey(), r, a));
    }
    return compute(samples);
  }
}
