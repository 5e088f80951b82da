package whale.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class CharTokenizerTest {
  @Test
  void roundTripsEveryPrintableCharacterAndNewline() {
    StringBuilder sb = new StringBuilder("\n");
    for (char c = 32; c <= 126; c++) {
      sb.append(c);
    }
    String all = sb.toString();
    int[] ids = CharTokenizer.encode(all);
    assertEquals(CharTokenizer.VOCAB_SIZE - 1, ids.length);
    assertEquals(all, CharTokenizer.decode(ids));
    assertEquals("def f(x):\n  return x+1\n", CharTokenizer.decode(CharTokenizer.encode("def f(x):\n  return x+1\n")));
  }

  @Test
  void vocabularyIsFixed() {
    assertEquals(97, CharTokenizer.VOCAB_SIZE);
    assertEquals(1, CharTokenizer.id('\n'));
    assertEquals(2, CharTokenizer.id(' '));
    assertEquals(96, CharTokenizer.id('~'));
    assertEquals("", CharTokenizer.decode(CharTokenizer.PAD));
  }

  @Test
  void unknownCharactersBecomeQuestionMarks() {
    assertEquals("a?b?c?", CharTokenizer.decode(CharTokenizer.encode("a\tb\u00e9c\r")));
    assertThrows(IllegalArgumentException.class, () -> CharTokenizer.decode(97));
  }

  @Test
  void configIsValidated() {
    assertThrows(IllegalArgumentException.class, () -> new ModelConfig(97, 160, 64, 2, 5, 4));
    assertThrows(IllegalArgumentException.class, () -> new ModelConfig(97, 0, 64, 2, 4, 4));
    assertEquals(16, ModelConfig.defaults().headDim());
  }
}
