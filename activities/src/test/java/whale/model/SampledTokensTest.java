package whale.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Trained parts matched to the ids a server sampled, by their context and text. */
class SampledTokensTest {
  static final int EOS = 2;

  @Test
  void aGenerateCallTrainsOnItsSampledIdsAndItsPromptIsLeftToTheTokenizer() {
    SampledTokens s = new SampledTokens();
    s.put("Q: 2+2?\nA:", " 4\n", new int[] {17, 198, 198}); // the stop string inside a token
    SftExample ex = s.exact(new SftExample("Q: 2+2?\nA:", " 4\n"), "<|im_end|>", EOS);
    assertNull(ex.sampledIds(0));
    assertArrayEquals(new int[] {17, 198, 198}, ex.sampledIds(1));
    assertEquals(1, s.matched());
  }

  @Test
  void aChatTurnClosedWithEosGetsTheEosIdWhenTheSampleWasCutByLength() {
    SampledTokens s = new SampledTokens();
    s.put("<user>hi</user>", "hello", new int[] {5, 6});          // cut off: no EOS sampled
    s.put("<user>yo</user>", "hey", new int[] {7, EOS});           // ended at EOS
    SftExample cut = s.exact(new SftExample("<user>hi</user>", "hello<|im_end|>"), "<|im_end|>", EOS);
    assertArrayEquals(new int[] {5, 6, EOS}, cut.sampledIds(1));
    SftExample ended = s.exact(new SftExample("<user>yo</user>", "hey<|im_end|>"), "<|im_end|>", EOS);
    assertArrayEquals(new int[] {7, EOS}, ended.sampledIds(1));
  }

  @Test
  void aConversationMatchesEachTurnByTheContextBeforeItAndCountsWhatItCannot() {
    SampledTokens s = new SampledTokens();
    s.put("S<u>a</u><a>", "x", new int[] {10, EOS});
    s.put("S<u>a</u><a>x<|im_end|><u>b</u><a>", "y", new int[] {11, EOS});
    SftExample conv = new SftExample(List.of("S<u>a</u><a>", "x<|im_end|>", "<u>b</u><a>", "Y<|im_end|>"));
    SftExample exact = s.exact(conv, "<|im_end|>", EOS);
    assertArrayEquals(new int[] {10, EOS}, exact.sampledIds(1));
    assertNull(exact.sampledIds(3), "the template re-rendered the second reply: its text is trained");
    assertEquals(1, s.matched());
    assertEquals(1, s.unmatched());
    SftExample none = new SftExample("other", "text");
    assertSame(none, s.exact(none, "<|im_end|>", EOS), "nothing sampled: the example as it was");
  }
}
