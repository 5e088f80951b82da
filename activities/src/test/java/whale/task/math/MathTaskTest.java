package whale.task.math;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import whale.task.Split;
import whale.task.TaskProblem;
import whale.task.Tool;

class MathTaskTest {
  static final MathTask TASK = new MathTask(2024);

  @Test
  void splitsHaveDefaultSizesAndAreDisjointByQuestion() {
    assertEquals(512, TASK.split(Split.WEIGHT).size());
    assertEquals(256, TASK.split(Split.HARNESS).size());
    assertEquals(128, TASK.split(Split.TEST).size());
    Set<String> questions = new HashSet<>();
    Set<String> ids = new HashSet<>();
    for (Split s : Split.values()) {
      for (TaskProblem p : TASK.split(s)) {
        assertTrue(questions.add(p.question()), "duplicate question " + p.question());
        assertTrue(ids.add(p.id()));
      }
    }
    assertEquals(896, questions.size());
    MathTask small = new MathTask(5, 10, 3, 2);
    assertEquals(List.of(10, 3, 2), List.of(small.split(Split.WEIGHT).size(), small.split(Split.HARNESS).size(),
        small.split(Split.TEST).size()));
  }

  @Test
  void deterministicForASeed() {
    MathTask again = new MathTask(2024);
    for (Split s : Split.values()) {
      assertEquals(TASK.split(s), again.split(s));
    }
    assertNotEquals(TASK.split(Split.TEST), new MathTask(2025).split(Split.TEST));
    assertEquals(TASK.pretrainingCorpus(3, 100), TASK.pretrainingCorpus(3, 100));
  }

  /** Replays the question's operations and checks every value stays in 0..MAX_VALUE and the answer. */
  @Test
  void problemsAreWellFormedMultiStep() {
    Pattern start = Pattern.compile("^(\\w+) has (\\d+) (\\w+)\\.$");
    for (Split s : Split.values()) {
      for (TaskProblem p : TASK.split(s)) {
        assertTrue(p.question().length() <= MathTask.MAX_QUESTION_CHARS, p.question());
        String[] sent = new MathTask.SentencesTool().apply(p.question()).split("\n");
        assertTrue(sent.length == 4 || sent.length == 5, p.question());
        Matcher m = start.matcher(sent[0]);
        assertTrue(m.matches(), sent[0]);
        int v = Integer.parseInt(m.group(2));
        for (int i = 1; i < sent.length - 1; i++) {
          v = apply(v, sent[i]);
          assertTrue(v >= 0 && v <= MathTask.MAX_VALUE, p.question());
        }
        assertEquals("How many " + m.group(3) + " does " + m.group(1) + " have?", sent[sent.length - 1]);
        assertEquals(Integer.toString(v), p.answer(), p.question());
      }
    }
  }

  static int apply(int v, String sentence) {
    Matcher n = Pattern.compile("(\\d+)").matcher(sentence);
    if (sentence.endsWith("doubles them.")) {
      return v * 2;
    }
    assertTrue(n.find(), sentence);
    int x = Integer.parseInt(n.group(1));
    assertTrue(x >= 0 && x <= MathTask.MAX_VALUE);
    if (sentence.matches("(He|She) (buys|finds|gets) \\d+ more\\.")) {
      return v + x;
    }
    assertTrue(sentence.matches("(He|She) (gives \\d+ to \\w+|loses \\d+|eats \\d+)\\."), sentence);
    return v - x;
  }

  @Test
  void verifierIsBinaryExactIntegerMatch() {
    TaskProblem p = new TaskProblem("x", "q", "14");
    assertEquals(1.0, TASK.verify(p, "14"));
    assertEquals(1.0, TASK.verify(p, "  14\n"));
    assertEquals(0.0, TASK.verify(p, "14 apples"));
    assertEquals(0.0, TASK.verify(p, "15"));
    assertEquals(0.0, TASK.verify(p, "14.0"));
    assertEquals(0.0, TASK.verify(p, ""));
    assertEquals(0.0, TASK.verify(p, null));
    assertTrue(TASK.wellFormed(" 3 "));
    assertFalse(TASK.wellFormed("three"));
    assertNull(MathTask.parseStrictInteger("99999999999"));
  }

  @Test
  void sentencesTool() {
    Tool t = TASK.tool("sentences");
    assertEquals("Tom has 12 apples.\nHe buys 7 more.\nHow many apples does Tom have?",
        t.apply("Tom has 12 apples. He buys 7 more. How many apples does Tom have?"));
    assertEquals("", t.apply(""));
    assertEquals(List.of("sentences", "calc"), TASK.tools().stream().map(Tool::name).toList());
    assertNull(TASK.tool("calculator"));
  }

  @Test
  void pretrainingCorpusIsOneStepAndArithmetic() {
    List<String> docs = TASK.pretrainingCorpus(11, 2000);
    assertEquals(2000, docs.size());
    Set<String> splitQuestions = TASK.allQuestions();
    Pattern qa = Pattern.compile("Q: (.*)\nA: (\\d+)\n");
    Pattern arith = Pattern.compile("(\\d+)([+*-])(\\d+)=(\\d+)\n");
    int qaCount = 0;
    for (String d : docs) {
      Matcher m = qa.matcher(d);
      if (m.matches()) {
        qaCount++;
        String q = m.group(1);
        assertFalse(splitQuestions.contains(q));
        String[] sent = new MathTask.SentencesTool().apply(q).split("\n");
        assertEquals(3, sent.length, q);
        int v = apply(Integer.parseInt(sent[0].replaceAll("\\D", "")), sent[1]);
        assertEquals(Integer.parseInt(m.group(2)), v, q);
      } else {
        Matcher a = arith.matcher(d);
        assertTrue(a.matches(), d);
        int x = Integer.parseInt(a.group(1));
        int y = Integer.parseInt(a.group(3));
        int z = switch (a.group(2)) {
          case "+" -> x + y;
          case "-" -> x - y;
          default -> x * y;
        };
        assertEquals(z, Integer.parseInt(a.group(4)));
        assertTrue(z >= 0 && z <= MathTask.MAX_VALUE);
      }
      for (char c : d.toCharArray()) {
        assertTrue(c == '\n' || (c >= 32 && c < 127), "vocabulary");
      }
    }
    assertTrue(qaCount > 1000 && qaCount < 1400, "about 60% one-step problems: " + qaCount);
  }

  @Test
  void calcToolEvaluatesOneOperationExactlyAndSaysWhatItTakes() {
    Tool calc = TASK.tool("calc");
    assertEquals("19", calc.apply("12+7"));
    assertEquals("-3", calc.apply(" 4 - 7 "));
    assertEquals("24", calc.apply("12*2"));
    assertEquals("-10", calc.apply("-5*2"));
    for (String bad : new String[] {"", "12", "12+", "1+2+3", "12/3", "a+b", "9999999999+1"}) {
      assertTrue(calc.apply(bad).startsWith("error: calc takes a+b, a-b or a*b of two integers, got '"),
          bad + " -> " + calc.apply(bad));
    }
    assertEquals("error: calc takes a+b, a-b or a*b of two integers, got 'null'", calc.apply(null));
  }

  /**
   * The chat corpus holds the conversations a tool-using chat harness has on one-step problems: the
   * builtin template's rendering of question, calc call, result and answer, where calc on the
   * call's input gives the answer and the answer is the question's; never a split's question.
   */
  @Test
  void chatCorpusIsOneStepProblemsAsToolUsingConversations() {
    List<String> chat = TASK.pretrainingCorpus(11, 2000, MathTask.CHAT_CORPUS);
    assertEquals(chat, TASK.pretrainingCorpus(11, 2000, MathTask.CHAT_CORPUS));
    assertEquals(TASK.pretrainingCorpus(11, 2000), TASK.pretrainingCorpus(11, 2000, null));
    assertEquals(2000, chat.size());
    Set<String> splitQuestions = TASK.allQuestions();
    Pattern conversation = Pattern.compile("\nQ: (.*)\nA: <tool_call>\\{\"name\": \"calc\", "
        + "\"arguments\": \\{\"input\": \"(\\d+[+*-]\\d+)\"\\}\\}</tool_call>\nTool calc: (\\d+)\nA: (\\d+)\n");
    for (String d : chat) {
      Matcher c = conversation.matcher(d);
      assertTrue(c.matches(), d);
      String q = c.group(1);
      assertFalse(splitQuestions.contains(q));
      String[] sent = new MathTask.SentencesTool().apply(q).split("\n");
      assertEquals(3, sent.length, q);
      int v = apply(Integer.parseInt(sent[0].replaceAll("\\D", "")), sent[1]);
      assertEquals(Integer.toString(v), TASK.tool("calc").apply(c.group(2)), d);
      assertEquals(Integer.toString(v), c.group(3));
      assertEquals(Integer.toString(v), c.group(4));
      assertEquals(d, whale.chat.ChatTemplate.builtin().render(
          MathTask.toolConversation(q, c.group(2), c.group(4)), List.of(), false).text());
      assertTrue(d.length() <= 192, "fits a 192-character window: " + d.length());
    }
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> TASK.pretrainingCorpus(1, 10, "poems"));
    assertEquals("model.pretrainCorpus: the math task has no 'poems' corpus", e.getMessage());
  }
}
