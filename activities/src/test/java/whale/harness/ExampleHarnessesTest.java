package whale.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.task.math.MathTemplatesTest;
import whale.task.math.MathTask;
import whale.task.Split;

/** The hand-written harnesses of examples/harnesses compile, and the tool-using agent runs calc. */
class ExampleHarnessesTest {
  static final Path EXAMPLES = Path.of("../examples/harnesses");
  static final MathTask TASK = new MathTask(7, 8, 16, 8);

  @Test
  void everyExampleCompiles() throws Exception {
    try (var files = Files.list(EXAMPLES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        HarnessCompiler.Result r = HarnessCompilerTest.COMPILER.tryCompile(Files.readString(f));
        assertTrue(r.ok(), f + ":\n" + r.errorText());
      }
    }
  }

  /**
   * MathCalc under a model that calls calc on a one-step question and answers with calc's result
   * (what the chat corpus teaches): every step is a call and an answer, and every problem is solved.
   */
  @Test
  void mathCalcHandsEveryStepToCalcInAConversationOfItsOwn() throws Exception {
    CompiledHarness h = HarnessCompilerTest.COMPILER.compile(
        Files.readString(EXAMPLES.resolve("MathCalc.java")));
    List<EpisodeResult> rs = new EpisodeRunner(new MathTemplatesTest.CalcCaller(), TASK)
        .run(h, TASK.split(Split.HARNESS), 1, 3L);
    for (EpisodeResult r : rs) {
      assertEquals(EpisodeStatus.COMPLETED, r.status(), r.error());
      assertEquals(1.0, r.reward(), r.toString());
      long calcs = r.toolCalls().stream().filter(t -> t.name().equals("calc")).count();
      assertTrue(calcs >= 2, r.toString());
      assertEquals(2 * calcs, r.turns(), "a call and an answer per step: " + r);
      // each step's conversation is trained as one sequence: call and answer trained, result not
      List<whale.model.SftExample> ex = r.sftExamples();
      assertEquals(calcs, ex.size(), r.toString());
      for (whale.model.SftExample e : ex) {
        assertEquals(4, e.parts().size(), e.toString());
        assertTrue(e.parts().get(1).startsWith("<tool_call>{\"name\": \"calc\""), e.toString());
        assertTrue(e.parts().get(2).startsWith("Tool calc: "), e.toString());
      }
    }
  }
}
