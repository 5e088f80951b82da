package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import whale.chat.ChatTemplate;
import whale.chat.ChatTemplateTest;
import whale.harness.Trajectory;
import whale.model.SftExample;

/**
 * One multi-turn conversation as RSFT trains it (Trajectory, then HfModel's tokenization) against
 * transformers with labels masked by return_assistant_tokens_mask: the same ids, the same loss and
 * gradients (golden "sft" of make_chat_fixtures.py, on the qwen2 fixture).
 */
class ChatSftParityTest {
  @Test
  void aConversationsLossAndGradientsAreTransformersWithTheAssistantMask() throws Exception {
    JsonNode g = ChatTemplateTest.golden();
    JsonNode c = g.get("cases").get(g.get("sft").get("case").asInt());
    SftExample ex = Trajectory.conversation(whale.chat.ChatJson.messages(c.get("messages")), List.of(),
        Set.of(2, 4), ChatTemplate.of(ChatTemplateTest.chat("generation")));
    try (HfModel m = HfModel.load(HfFixtures.dir("qwen2"), List.of())) {
      SftTrainer.Example e = m.example(ex);
      assertArrayEquals(HfFixtures.ints(c.get("tokens")), e.ids());
      int[] mask = new int[e.ids().length];
      for (int i = 0; i < mask.length; i++) {
        mask[i] = e.trained()[i] ? 1 : 0;
      }
      assertArrayEquals(HfFixtures.ints(c.get("assistant_masks")), mask);
      try (SftTrainer t = SftTrainer.full(m.decoder(), m.manager())) {
        float[] loss = new float[1];
        Map<String, Double> norms = t.gradientNorms(List.of(e), loss);
        double lossDiff = Math.abs(loss[0] - g.get("sft").get("loss").asDouble());
        double gradDiff = SftParityTest.maxRelativeDiff(norms, g.get("sft").get("gradNorms"));
        System.out.printf("chat conversation: |loss diff| = %.3g, max relative grad-norm diff = %.3g%n",
            lossDiff, gradDiff);
        assertTrue(lossDiff < 1e-5, "loss diff " + lossDiff);
        assertTrue(gradDiff < 1e-4, "grad-norm relative diff " + gradDiff);
      }
    }
  }
}
