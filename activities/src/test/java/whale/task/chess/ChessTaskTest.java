package whale.task.chess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.wolfraam.chessgame.ChessGame;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.activities.TaskCatalog;
import whale.task.Split;
import whale.task.TaskProblem;
import whale.workflows.activities.TaskRef;

/** The chess task's data, verifier, tools and Lichess loader, against the chessgame library. */
class ChessTaskTest {
  static final ChessTask TASK = ChessTask.builtin(1234, 60, 20, 20);
  static final String HEADER = "PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,"
      + "OpeningTags";
  @TempDir Path dir;

  @Test
  void builtinSplitsAreDisjointDeterministicMatesInOne() {
    Set<String> questions = new HashSet<>();
    for (Split s : Split.values()) {
      for (TaskProblem p : TASK.split(s)) {
        assertTrue(questions.add(p.question()), "duplicate " + p.question());
        assertTrue(p.question().startsWith("Mate in 1. FEN: "), p.question());
        ChessGame g = Boards.game(ChessTask.fenOf(p.question()));
        assertEquals(List.of(p.answer()), Boards.matingMoves(g), "exactly one mating move: " + p.question());
      }
    }
    assertEquals(100, questions.size());
    assertEquals(TASK.split(Split.TEST), ChessTask.builtin(1234, 60, 20, 20).split(Split.TEST));
    assertNotEquals(TASK.split(Split.TEST), ChessTask.builtin(99, 60, 20, 20).split(Split.TEST));
    assertEquals(List.of(60, 20, 20), List.of(TASK.split(Split.WEIGHT).size(), TASK.split(Split.HARNESS).size(),
        TASK.split(Split.TEST).size()));
  }

  @Test
  void verifierAcceptsOnlyTheReferenceLineWrittenByTheModel() {
    TaskProblem p = TASK.split(Split.TEST).get(0);
    String mate = p.answer();
    assertEquals(1.0, TASK.verify(p, mate, List.of(mate + "\n")));
    assertEquals(1.0, TASK.verify(p, " " + mate.toUpperCase() + " ", List.of("I play " + mate)));
    // a legal move that does not mate, an empty answer, garbage, a mate plus an extra move
    ChessGame g = Boards.game(ChessTask.fenOf(p.question()));
    String other = Boards.legalUci(g).stream().filter(m -> !m.equals(mate)).findFirst().orElseThrow();
    assertEquals(0.0, TASK.verify(p, other, List.of(other)));
    assertEquals(0.0, TASK.verify(p, "", List.of(mate)));
    assertEquals(0.0, TASK.verify(p, null, List.of(mate)));
    assertEquals(0.0, TASK.verify(p, "checkmate!", List.of(mate)));
    assertEquals(0.0, TASK.verify(p, mate + " " + mate, List.of(mate)));
    // provenance: the right move that no model completion contains is the harness's choice: rejected
    assertEquals(0.0, TASK.verify(p, mate, List.of(other, "no idea")));
    assertEquals(0.0, TASK.verify(p, mate, List.of()));
    // the two-argument form checks the line alone
    assertEquals(1.0, TASK.verify(p, mate));
    assertTrue(TASK.wellFormed("e2e4 e7e8q"));
    // a task without a trace rule (math) scores the same with or without the completions
    whale.task.math.MathTask math = new whale.task.math.MathTask(1, 1, 0, 0);
    TaskProblem q = math.split(Split.WEIGHT).get(0);
    assertEquals(1.0, math.verify(q, q.answer(), List.of()));
    assertEquals(math.verify(q, "-1"), math.verify(q, "-1", List.of("-1")));
    assertFalse(TASK.wellFormed("Qh7#"));
  }

  /**
   * A Lichess row: white to move plays the FEN's first move (the opponent's, from the solver's view),
   * then black mates in 2 along the line: solver, white's reply, solver.
   */
  @Test
  void lichessFirstMoveIsTheOpponentsAndTheLineIsVerified() throws Exception {
    // white: Kh1, pawns g2 h2, Rc1; black: Kg8, Rb8 (a back-rank set-up)
    // White blunders c1c7 (the first move); black mates: b8b1 (check), c7c1 (block), b1c1#.
    String fen = "1r4k1/8/8/8/8/8/6PP/2R4K w - - 0 1";
    Path csv = dir.resolve("puzzles.csv");
    Files.writeString(csv, HEADER + "\n"
        + "00a1,\"" + fen + "\",c1c7 b8b1 c7c1 b1c1,1500,75,95,1000,backRankMate mate mateIn2 short,"
        + "https://lichess.org/abc#10,\n"
        + pad("00b1", 40) + "\n");
    ChessTask t = ChessTask.lichess(csv, null, 1, 1, 0, 1);
    TaskProblem p = t.split(Split.WEIGHT).get(0).id().equals("lichess-00a1") ? t.split(Split.WEIGHT).get(0)
        : t.split(Split.TEST).get(0);
    assertEquals("lichess-00a1", p.id());
    assertEquals("Mate in 2. FEN: 1r4k1/2R5/8/8/8/8/6PP/7K b - - 1 1", p.question(),
        "the first move is applied before the puzzle starts");
    assertEquals("b8b1 c7c1 b1c1", p.answer());
    List<String> both = List.of("b8b1\n", "b1c1\n");
    assertEquals(1.0, t.verify(p, "b8b1 b1c1", both));
    assertEquals(0.0, t.verify(p, "c1c7 b8b1 c7c1 b1c1", both), "the opponent's moves are not the answer");
    assertEquals(0.0, t.verify(p, "b8b1", both), "the whole line must be played");
    assertEquals(0.0, t.verify(p, "b8b1 b1c1", List.of("b8b1")), "the second move came from no completion");
    // the environment's reply on the line is the reference's
    assertEquals("c7c1", t.tool("reply").apply(ChessTask.fenOf(p.question()) + " | b8b1"));
  }

  /** Another legal row: white's g2g3 then black plays a legal, non-mating line. */
  private static String pad(String id, int rating) {
    return id + ",6k1/8/8/8/8/8/6PP/7K w - - 0 1,g2g3 g8f7 h1g2 f7e6,15" + rating + ",80,90,50,endgame short,"
        + "https://lichess.org/x,";
  }

  @Test
  void malformedLichessFilesAreRejectedWithFileAndLine() throws Exception {
    String ok = "00a1,6k1/8/8/8/8/8/6PP/7K w - - 0 1,g2g3 g8f7,1500,75,95,1000,endgame,https://lichess.org/x,";
    assertRejected(HEADER + "\n" + ok + "\n00a2,not a fen,g2g3 g8f7,1,1,1,1,x,y,\n", ":3:", "invalid FEN");
    assertRejected(HEADER + "\n" + ok + "\n" + ok.replace("g2g3 g8f7", "g2g5 g8f7") + "\n", ":3:",
        "first move g2g5 is not legal");
    assertRejected(HEADER + "\n" + ok.replace("g2g3 g8f7", "g2g3 g8g6") + "\n", ":2:", "move 2 (g8g6)");
    assertRejected(HEADER + "\n" + ok.replace("g2g3 g8f7", "g2g3") + "\n", ":2:", "at least one solver move");
    assertRejected("id,fen,moves\n" + ok + "\n", ":1:", "no PuzzleId column");
    assertRejected(HEADER + "\n00a1,\"6k1/8/8/8/8/8/6PP/7K w - - 0 1\n", ":2:", "unterminated");
    // too few puzzles for the spec: says how many there are and what the spec asks
    Path csv = dir.resolve("few.csv");
    Files.writeString(csv, HEADER + "\n" + ok + "\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TaskCatalog.create(
        new TaskRef("chess", 1, 5, 0, 1, "lichess", csv.toString(), null, null)));
    assertTrue(e.getMessage().contains("1 distinct problems"), e.getMessage());
  }

  private void assertRejected(String content, String line, String reason) throws Exception {
    Path csv = Files.createTempFile(dir, "bad", ".csv");
    Files.writeString(csv, content);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ChessTask.lichess(
        csv, null, 1, 1, 0, 0));
    assertTrue(e.getMessage().startsWith(csv + line), e.getMessage());
    assertTrue(e.getMessage().contains(reason), e.getMessage());
  }

  @Test
  void toolsAreStatelessTextInTextOut() {
    String fen = "6k1/8/5K2/8/8/8/8/7Q w - - 0 1";
    assertEquals(fen, TASK.tool("fen").apply(fen));
    assertEquals("6k1/7Q/5K2/8/8/8/8/8 b - - 1 1", TASK.tool("fen").apply(fen + " | h1h7"));
    assertEquals("6k1/7Q/5K2/8/8/8/8/8 b - - 1 1", TASK.tool("move").apply(fen + " | h1h7"));
    assertTrue(TASK.tool("move").apply(fen + " | h1h9").startsWith("error: illegal move h1h9"));
    assertTrue(TASK.tool("move").apply(fen + " | a1a2").startsWith("error: illegal move a1a2"));
    assertTrue(TASK.tool("move").apply("nonsense | h1h7").startsWith("error: invalid FEN"));
    assertEquals("Kf6 Qh1 kg8 w", TASK.tool("pieces").apply(fen));
    assertEquals("......k.\n........\n.....K..\n........\n........\n........\n........\n.......Q\n"
        + "white to move", TASK.tool("ascii").apply(fen));
    String legal = TASK.tool("legal").apply(fen);
    assertEquals(27, legal.split(" ").length);
    assertTrue(legal.contains("h1h7") && legal.contains("f6e7") && !legal.contains("f6g7"));
    assertEquals("none", TASK.tool("legal").apply("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), "stalemate");
    assertEquals("none", TASK.tool("reply").apply("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), "mated: game over");
    // off any puzzle line the reply is still a legal move, and the same one every time
    String r = TASK.tool("reply").apply("6k1/7Q/5K2/8/8/8/8/8 b - - 1 1");
    assertTrue(TASK.tool("legal").apply("6k1/7Q/5K2/8/8/8/8/8 b - - 1 1").contains(r));
    assertEquals(r, TASK.tool("reply").apply("6k1/7Q/5K2/8/8/8/8/8 b - - 1 1"));
  }

  @Test
  void corpusTeachesNotationWithoutASplitPosition() {
    List<String> corpus = TASK.pretrainingCorpus(3, 400);
    assertEquals(corpus, TASK.pretrainingCorpus(3, 400));
    Set<String> keys = new HashSet<>();
    for (Split s : Split.values()) {
      for (TaskProblem p : TASK.split(s)) {
        keys.add(Boards.key(Boards.game(ChessTask.fenOf(p.question()))));
      }
    }
    int mates = 0;
    for (String d : corpus) {
      String[] lines = d.split("\n");
      assertEquals(2, lines.length, d);
      assertTrue(lines[0].startsWith("FEN: ") || lines[0].startsWith("Pieces: "), d);
      if (lines[0].startsWith("FEN: ")) {
        ChessGame g = Boards.game(lines[0].substring(5));
        assertFalse(keys.contains(Boards.key(g)), "a split's position in the corpus: " + d);
        String move = lines[1].substring(lines[1].indexOf(' ') + 1);
        assertTrue(Boards.play(g, move), "illegal move in " + d);
        if (lines[1].startsWith("Mate: ")) {
          mates++;
          assertTrue(Boards.mated(g), d);
        }
      }
    }
    assertTrue(mates > 20, "some mates: " + mates);
  }
}
