package whale.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import whale.task.math.MathGenome.Axis;
import whale.task.searchqa.SearchQaGenome;
import whale.task.chess.ChessGenome;
import whale.task.math.MathGenome;
import whale.task.math.MathTemplates;

/** The genome plumbing every task's template search shares. */
class GenomeSpaceTest {
  @Test
  void encodesParsesAndEnumeratesEachTasksSpace() {
    // the last factor is FORM: math completion | chat | tools, chess and search QA completion | chat
    assertEquals(3 * 2 * 3 * 3 * 3 * 3 * 3, MathGenome.SPACE.all().size());
    assertEquals(4 * 3 * 3 * 3 * 2 * 2, ChessGenome.SPACE.all().size());
    assertEquals(3 * 3 * 3 * 3 * 2 * 3 * 2 * 2 * 2, SearchQaGenome.SPACE.all().size());
    MathGenome first = MathGenome.SPACE.all().get(0);
    assertEquals("format=QA;decomp=DIRECT;votes=1;retries=0;parse=FIRST_INT;maxNew=4", first.encode());
    assertEquals("format=QA;decomp=DIRECT;votes=1;retries=0;parse=FIRST_INT;maxNew=4;form=CHAT",
        MathGenome.SPACE.all().get(1).encode(), "the last axis varies fastest");
    assertEquals("format=QA;decomp=DIRECT;votes=1;retries=0;parse=FIRST_INT;maxNew=4;form=TOOLS",
        MathGenome.SPACE.all().get(2).encode());
    assertEquals("format=QA;decomp=DIRECT;votes=1;retries=0;parse=FIRST_INT;maxNew=8",
        MathGenome.SPACE.all().get(3).encode(), "an omitted default is left out of the line");
    for (ChessGenome g : ChessGenome.SPACE.all()) {
      assertEquals(g, ChessGenome.SPACE.parse(g.encode()));
    }
    assertEquals(first, MathGenome.SPACE.parse(first.encode()));
    for (SearchQaGenome g : SearchQaGenome.SPACE.all()) {
      assertEquals(g, SearchQaGenome.SPACE.parse(g.encode()));
    }
    MathGenome h0 = MathGenome.initial();
    assertEquals(List.of("3", "5"), h0.neighbours(Axis.VOTES).stream().map(g -> g.value(Axis.VOTES)).toList());
    assertEquals(h0.neighbours(Axis.FORMAT).get(1), h0.with(Axis.FORMAT, "THE_ANSWER_IS"));
  }

  @Test
  void badGenomesSayWhatIsWrong() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ChessGenome.SPACE.parse("board=FEN;cue=MOVE;votes=4;retries=0;parse=WHOLE_LINE"));
    assertEquals("votes=4 is not one of [1, 3, 5]", e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> ChessGenome.SPACE.parse("board=FEN;cue=MOVE;votes=1;retries=0;colour=WHITE"));
    assertTrue(e.getMessage().startsWith("unknown genome key colour in "), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> ChessGenome.SPACE.parse("board=FEN;cue=MOVE;votes=1"));
    assertTrue(e.getMessage().endsWith(": no retries"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MathGenome.initial().with(Axis.PARSING, "FIRST_MOVE"));
    GenomeSpace.Builder<MathGenome, Axis> one = GenomeSpace.<MathGenome, Axis>of(Axis.class)
        .axis(Axis.FORMAT, "format", MathGenome::format, List.of(MathGenome.PromptFormat.values()));
    IllegalStateException s = assertThrows(IllegalStateException.class,
        () -> one.build(v -> MathGenome.initial(), g -> ""));
    assertEquals("genome axis DECOMPOSITION has no values", s.getMessage());
  }

  @Test
  void aSourceYieldsOnlyItsOwnTasksGenome() {
    String math = MathTemplates.initialHarnessSource();
    String chess = ChessGenome.SPACE.render(ChessGenome.initial());
    String searchQa = SearchQaGenome.SPACE.render(SearchQaGenome.initial());
    assertEquals(MathGenome.initial(), MathGenome.SPACE.fromSource(math));
    assertEquals(ChessGenome.initial(), ChessGenome.SPACE.fromSource(chess));
    assertEquals(SearchQaGenome.initial(), SearchQaGenome.SPACE.fromSource(searchQa));
    for (String other : List.of(chess, searchQa)) {
      assertNull(MathGenome.SPACE.fromSource(other));
    }
    assertNull(ChessGenome.SPACE.fromSource(math));
    assertNull(SearchQaGenome.SPACE.fromSource(math));
    assertNull(SearchQaGenome.SPACE.fromSource("public class X {}"));
    assertNull(SearchQaGenome.SPACE.fromSource(null));
    assertTrue(math.startsWith("package whale.generated;\n\nimport whale.harness.Harness;\n"), math);
  }
}
