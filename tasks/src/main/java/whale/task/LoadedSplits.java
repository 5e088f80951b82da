package whale.task;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The one rule for turning dataset files into whale's three disjoint splits: drop repeated
 * questions, shuffle with the data seed, take D_weight then D_harness from the train file, and D_test
 * from the test file (or, without one, from what is left of the train file). Too few problems is an
 * error that says how many there are and how many the spec asks for.
 */
public final class LoadedSplits {
  private LoadedSplits() {}

  /**
   * @param test problems of the test file, or null to draw D_test from {@code train}
   * @param source names the files in error messages
   */
  public static Map<Split, List<TaskProblem>> partition(List<TaskProblem> train, List<TaskProblem> test,
      long seed, int weight, int harness, int testSize, String source) {
    List<TaskProblem> pool = distinct(train, new HashSet<>());
    Collections.shuffle(pool, new Random(seed));
    int needTrain = weight + harness + (test == null ? testSize : 0);
    if (pool.size() < needTrain) {
      throw new IllegalArgumentException(source + ": " + pool.size() + " distinct problems, the spec "
          + "needs " + needTrain + " (data.weightProblems " + weight + " + data.harnessProblems "
          + harness + (test == null ? " + data.testProblems " + testSize : "") + ")");
    }
    Map<Split, List<TaskProblem>> out = new EnumMap<>(Split.class);
    out.put(Split.WEIGHT, List.copyOf(pool.subList(0, weight)));
    out.put(Split.HARNESS, List.copyOf(pool.subList(weight, weight + harness)));
    if (test == null) {
      out.put(Split.TEST, List.copyOf(pool.subList(weight + harness, needTrain)));
    } else {
      Set<String> seen = new HashSet<>();
      for (TaskProblem p : pool.subList(0, weight + harness)) {
        seen.add(p.question());
      }
      // A test question that also appears in training data is dropped: the splits stay disjoint.
      List<TaskProblem> t = distinct(test, seen);
      Collections.shuffle(t, new Random(seed ^ 0x5DEECE66DL));
      if (t.size() < testSize) {
        throw new IllegalArgumentException(source + ": the test file has " + t.size()
            + " distinct problems not in the training splits, the spec needs data.testProblems "
            + testSize);
      }
      out.put(Split.TEST, List.copyOf(t.subList(0, testSize)));
    }
    return out;
  }

  private static List<TaskProblem> distinct(List<TaskProblem> in, Set<String> seen) {
    List<TaskProblem> out = new ArrayList<>();
    for (TaskProblem p : in) {
      if (seen.add(p.question())) {
        out.add(p);
      }
    }
    return out;
  }
}
