package whale.harness;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import whale.task.math.MathGenome.Axis;
import whale.task.math.MathGenome;
import whale.task.math.MathTemplates;

class PromptOnlyCheckTest {
  @Test
  void everyFormatMutationOfTheTemplateIsPromptOnly() {
    String h0 = MathTemplates.initialHarnessSource();
    List<HarnessCandidate> c = new MathTemplates(EnumSet.of(Axis.FORMAT))
        .propose(ArchiveView.empty(), 3, 1L);
    assertTrue(!c.isEmpty());
    for (HarnessCandidate h : c) {
      assertNull(PromptOnlyCheck.problem(h0, h.source()), h.name());
    }
  }

  @Test
  void anyOtherAxisIsACodeChangeAndSaysWhere() {
    String h0 = MathTemplates.initialHarnessSource();
    for (Axis axis : EnumSet.complementOf(EnumSet.of(Axis.FORMAT))) {
      for (HarnessCandidate h : new MathTemplates(EnumSet.of(axis)).propose(ArchiveView.empty(), 2, 3L)) {
        if (MathGenome.initial().equals(MathGenome.SPACE.fromSource(h.source()))) {
          continue; // h0 itself under a new name: the same code, rightly accepted
        }
        String why = PromptOnlyCheck.problem(h0, h.source());
        assertNotNull(why, axis + " " + h.name() + " passed as prompt-only");
        assertTrue(why.startsWith("prompt-only search (fst): line "), why);
      }
    }
  }

  @Test
  void commentsWhitespaceAndLiteralsMayChangeCodeMayNot() {
    String a = "class A { String p() { return \"Q: \" + x; } }";
    assertNull(PromptOnlyCheck.problem(a, "// new\nclass B {\n  String p() { return \"Question: \" + x; }\n}"));
    assertNotNull(PromptOnlyCheck.problem(a, "class A { String p() { return \"Q: \" + y; } }"));
    assertNotNull(PromptOnlyCheck.problem(a, "class A { String p() { return \"Q: \" + x + 1; } }"));
    assertNotNull(PromptOnlyCheck.problem("char c = '\\n';", "char c = ' ';"));
  }
}
