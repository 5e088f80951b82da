package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.chat.ChatTemplate;
import whale.chat.Message;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.SamplingParams;

/** Chat requests on a real checkpoint: to EOS (not a line stop), and an over-long one fails alone. */
class HfChatGenerationTest {
  @Test
  void aChatTurnEndsAtEosAndAConversationOverTheContextFailsOnlyItsOwnCall() throws Exception {
    try (HfModel m = HfModel.load(HfFixtures.dir("qwen2"), HfModel.LINE)) {
      ChatTemplate t = m.chatTemplate();
      String prompt = t.prompt(List.of(Message.user("What is 3 + 4?")), List.of());
      // the first seed whose turn, sampled with EOS as the only stop, has a newline inside it
      long seed = -1;
      String whole = null;
      int[] ids = null;
      for (long s = 0; s < 64 && seed < 0; s++) {
        ids = m.generateIds(List.of(new KvSampler.Row(m.promptIds(prompt), s, 40)),
            Sampling.of(SamplingParams.ROLLOUT))[0];
        int n = ids.length > 0 && m.tokenizer().eosIds().contains(ids[ids.length - 1]) ? ids.length - 1 : ids.length;
        String text = m.tokenizer().decode(Arrays.copyOf(ids, n));
        int nl = text.indexOf('\n');
        if (nl >= 0 && nl < text.length() - 1) {
          seed = s;
          whole = text;
        }
      }
      assertTrue(seed >= 0, "some seed's turn has a newline inside it");
      String tooLong = t.prompt(List.of(Message.user("word ".repeat(400))), List.of());
      List<Completion> out = m.generate(List.of(new GenerationRequest(prompt, seed, 40, true),
          new GenerationRequest(tooLong, 4, 40, true), new GenerationRequest(prompt, seed, 40)),
          SamplingParams.ROLLOUT);
      assertEquals(whole, out.get(0).text(), "a chat turn is not cut at the model's line stop");
      assertNull(out.get(0).error());
      assertEquals(ids.length, out.get(0).completionTokens());
      assertEquals(whole.substring(0, whole.indexOf('\n') + 1), out.get(2).text(),
          "the same request as a completion stops at the line, as before");
      Completion failed = out.get(1);
      assertEquals("", failed.text());
      assertEquals(0, failed.completionTokens());
      assertEquals("the conversation's " + failed.promptTokens() + " tokens and 40 new tokens exceed the "
          + "model's context of 256 (max_position_embeddings)", failed.error());
    }
  }
}
