package whale.task.math;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.TaskCatalog;
import whale.workflows.activities.TaskRef;
import whale.task.Jsonl;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;

/** GSM8K- and MATH-style JSONL through the task catalog, and their verifiers. */
class MathFileTaskTest {
  @TempDir Path dir;

  static final List<String> GSM8K = List.of(
      "{\"question\": \"Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
          + "How many clips did Natalia sell altogether in April and May?\", \"answer\": \"Natalia sold 48/2 = "
          + "<<48/2=24>>24 clips in May.\\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\\n"
          + "#### 72\"}",
      "{\"question\": \"A house costs $1,200 per month for 10 months. How much is that?\", \"answer\": "
          + "\"1200 * 10 = 12000\\n#### 12,000\"}",
      "{\"question\": \"It is 3 degrees and falls by 5. What is it now?\", \"answer\": \"3-5=-2\\n#### -2\"}",
      "{\"question\": \"Half of 5?\", \"answer\": \"#### 2.5\"}");
  static final List<String> MATH = List.of(
      "{\"problem\": \"Simplify $\\\\frac{6}{8}$.\", \"level\": \"Level 1\", \"type\": \"Prealgebra\", "
          + "\"solution\": \"Divide by 2: $\\\\boxed{\\\\frac{3}{4}}$.\"}",
      "{\"problem\": \"Compute $\\\\sqrt{16}$.\", \"solution\": \"It is $\\\\boxed{4}$.\"}",
      "{\"problem\": \"Write the set.\", \"solution\": \"So $x \\\\in \\\\boxed{\\\\{1, 2\\\\}}$ or "
          + "\\\\boxed{\\\\left( 1, \\\\frac{1}{2} \\\\right)}.\"}",
      "{\"problem\": \"Given answer field.\", \"solution\": \"no box here\", \"answer\": \"7\"}");

  private TaskRef ref(String format, Path train, int w, int h, int t) {
    return new TaskRef("math", 3, w, h, t, format, train.toString(), null, null);
  }

  @Test
  void gsm8kReferencesAreTheFinalNumberAndMatchNumerically() throws IOException {
    Path f = Files.write(dir.resolve("gsm8k.jsonl"), GSM8K);
    Task task = TaskCatalog.create(ref("gsm8k", f, 2, 1, 1));
    assertEquals(List.of("72", "12000", "-2", "2.5"), MathFileTask.read(MathFileTask.Format.GSM8K, f).stream()
        .map(TaskProblem::answer).toList());
    TaskProblem p = new TaskProblem("x", "q", "12000");
    assertEquals(1.0, task.verify(p, "12,000"));
    assertEquals(1.0, task.verify(p, " 12000 "));
    assertEquals(1.0, task.verify(p, "12000.0"));
    assertEquals(0.0, task.verify(p, "1200"));
    assertEquals(0.0, task.verify(p, "12,00"), "a misplaced separator is not a number");
    assertEquals(0.0, task.verify(p, "about 12000"));
    assertTrue(task.wellFormed("-2"));
    assertFalse(task.wellFormed("two"));
    assertEquals(4, task.split(Split.WEIGHT).size() + task.split(Split.HARNESS).size()
        + task.split(Split.TEST).size());
    assertEquals("math", task.name());
    assertTrue(task.pretrainingCorpus(1, 10).size() == 10, "the built-in arithmetic corpus");
  }

  @Test
  void mathReferencesComeFromTheLastBoxedWithNestedBraces() throws IOException {
    Path f = Files.write(dir.resolve("math.jsonl"), MATH);
    assertEquals(List.of("\\frac{3}{4}", "4", "\\left( 1, \\frac{1}{2} \\right)", "7"),
        MathFileTask.read(MathFileTask.Format.MATH, f).stream().map(TaskProblem::answer).toList());
    Task task = TaskCatalog.create(ref("math", f, 2, 1, 1));
    TaskProblem frac = new TaskProblem("x", "q", "\\frac{3}{4}");
    assertEquals(1.0, task.verify(frac, "The answer is \\boxed{\\dfrac{3}{4}}."));
    assertEquals(1.0, task.verify(frac, "\\boxed{ \\frac{3}{4} }"));
    assertEquals(0.0, task.verify(frac, "\\frac{3}{4}"), "strict: no \\boxed{}, no credit");
    assertEquals(0.0, task.verify(frac, "\\boxed{\\frac{4}{3}}"));
    assertEquals(0.0, task.verify(frac, "\\boxed{\\frac{3}{4}"), "unbalanced braces");
    TaskProblem pair = new TaskProblem("x", "q", "\\left( 1, \\frac{1}{2} \\right)");
    assertEquals(1.0, task.verify(pair, "so \\boxed{(1,\\frac{1}{2})}"));
    assertEquals(1.0, task.verify(new TaskProblem("x", "q", "4"), "\\boxed{4.0}"));
    assertEquals("a{b}c", MathAnswers.lastBoxed("\\boxed{x} then \\boxed{a{b}c}"));
    assertNull(MathAnswers.lastBoxed("\\boxed{a{b}"));
    assertTrue(task.wellFormed("\\boxed{1}"));
    assertFalse(task.wellFormed("1"));
  }

  @Test
  void malformedFilesAreRejectedWithFileAndLine() throws IOException {
    assertBad("gsm8k", "g1.jsonl", List.of(GSM8K.get(0), "{\"question\": \"q\", \"answer\": \"no marker\"}"),
        "g1.jsonl:2: answer must end in '#### <number>'");
    assertBad("gsm8k", "g2.jsonl", List.of(GSM8K.get(0), GSM8K.get(1), "{\"question\": \"q\", \"answer\": \"#### x\"}"),
        "g2.jsonl:3: answer must end in '#### <number>'");
    assertBad("gsm8k", "g3.jsonl", List.of("{\"problem\": \"q\", \"answer\": \"#### 1\"}"), "g3.jsonl:1: no question field");
    assertBad("gsm8k", "g4.jsonl", List.of("not json"), "g4.jsonl:1: not valid JSON");
    assertBad("math", "m1.jsonl", List.of(MATH.get(0), "{\"problem\": \"q\", \"solution\": \"\\\\boxed{1\"}"),
        "m1.jsonl:2: solution has no complete \\boxed{...} answer");
    assertBad("math", "m2.jsonl", List.of("{\"solution\": \"\\\\boxed{1}\"}"), "m2.jsonl:1: no problem field");
  }

  private void assertBad(String format, String name, List<String> lines, String expected) throws IOException {
    Path f = Files.write(dir.resolve(name), lines);
    Exception e = assertThrows(Jsonl.MalformedFileException.class, () -> TaskCatalog.create(ref(format, f, 1, 1, 1)));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
