package whale.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeStatus;

class MeanAtKTest {
  static MeanAtK.Samples s(String id, String... answersWithMarks) {
    // "14+" = answer 14 correct, "3-" = answer 3 wrong, "-" = no answer
    List<Double> r = new java.util.ArrayList<>();
    List<String> a = new java.util.ArrayList<>();
    for (String x : answersWithMarks) {
      r.add(x.endsWith("+") ? 1.0 : 0.0);
      String ans = x.substring(0, x.length() - 1);
      a.add(ans.isEmpty() ? null : ans);
    }
    return new MeanAtK.Samples(id, r, a);
  }

  @Test
  void handComputed() {
    // p1: 2/4 correct, majority "14" (2 votes) correct
    // p2: 0/4 correct, majority "5" wrong
    // p3: 1/4 correct, majority "7" (2 votes) wrong
    // p4: 4/4 correct
    MeanAtK m = MeanAtK.compute(List.of(
        s("p1", "14+", "3-", "14+", "2-"),
        s("p2", "5-", "5-", "6-", "-"),
        s("p3", "7-", "9+", "7-", "-"),
        s("p4", "1+", "1+", "1+", "1+")));
    assertEquals(4, m.problems());
    assertEquals(4, m.k());
    assertEquals(16, m.rollouts());
    assertEquals((0.5 + 0 + 0.25 + 1) / 4, m.meanAtK(), 1e-12);
    assertEquals(3.0 / 4, m.passAtK(), 1e-12);
    assertEquals(2.0 / 4, m.majAtK(), 1e-12);
  }

  @Test
  void tiesGoToTheFirstAnswerAndBlanksDoNotVote() {
    // tie 2-2: "8" appeared first and is correct
    assertEquals(1.0, MeanAtK.compute(List.of(s("a", "8+", "9-", "9-", "8+"))).majAtK());
    // tie 2-2: "9" appeared first and is wrong
    assertEquals(0.0, MeanAtK.compute(List.of(s("a", "9-", "8+", "8+", "9-"))).majAtK());
    // three blanks do not outvote one correct answer; answers are trimmed before voting
    assertEquals(1.0, MeanAtK.compute(List.of(s("a", "-", "-", "-", " 4 +", "4+"))).majAtK());
    // nothing to vote on
    assertEquals(0.0, MeanAtK.compute(List.of(s("a", "-", "-"))).majAtK());
  }

  @Test
  void emptyAndEpisodes() {
    assertEquals(new MeanAtK(0, 0, 0, 0, 0, 0), MeanAtK.compute(List.of()));
    List<EpisodeResult> eps = Arrays.asList(
        ep("x", 1, "3", 0.0), ep("x", 0, "2", 1.0), ep("y", 0, "5", 0.0), ep("y", 1, "5", 0.0));
    MeanAtK m = MeanAtK.ofEpisodes(eps);
    assertEquals(2, m.problems());
    assertEquals(2, m.k());
    assertEquals(4, m.rollouts());
    assertEquals(0.25, m.meanAtK(), 1e-12);
    assertEquals(0.5, m.passAtK(), 1e-12);
    // x: tie 1-1, sample 0 ("2", correct) comes first after sorting by sample index
    assertEquals(0.5, m.majAtK(), 1e-12);
  }

  static EpisodeResult ep(String id, int sample, String answer, double reward) {
    return new EpisodeResult(id, sample, answer, reward, 1, List.of(), List.of(), List.of(),
        EpisodeStatus.COMPLETED, null);
  }
}
