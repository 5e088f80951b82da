package whale.task.chess;

import io.github.wolfraam.chessgame.ChessGame;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import whale.task.LoadedSplits;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * Chess puzzles. A question is "Mate in N. FEN: <fen>" (Lichess puzzles without a mate theme: "Solve
 * in N."); the reference answer is the line from that position in UCI (solver, opponent, solver, ...).
 * An answer is the solver's moves in UCI separated by spaces; the opponent's replies are the line's,
 * played by the environment (the {@code reply} tool). Built-in data: K+Q or K+R against a lone king,
 * white to mate in 1 with exactly one mating move. Loaded data: the Lichess puzzle CSV.
 */
public final class ChessTask implements Task {
  public static final String NAME = "chess";
  public static final String FEN_MARKER = "FEN: ";

  private final Map<Split, List<TaskProblem>> splits;
  /** Every position of the task (by {@link Boards#key}): the pretraining corpus avoids them. */
  private final Set<String> positions = new HashSet<>();
  private final List<Tool> tools;

  private ChessTask(Map<Split, List<TaskProblem>> splits) {
    this.splits = splits;
    Map<String, String> replies = new HashMap<>();
    for (List<TaskProblem> l : splits.values()) {
      for (TaskProblem p : l) {
        ChessGame g = Boards.game(fenOf(p.question()));
        positions.add(Boards.key(g));
        String[] line = p.answer().split(" ");
        for (int i = 0; i < line.length; i++) {
          if (!Boards.play(g, line[i])) {
            throw new IllegalStateException("reference line of " + p.id() + " is not legal at " + line[i]);
          }
          if (i % 2 == 0 && i + 1 < line.length) {
            replies.putIfAbsent(Boards.key(g), line[i + 1]); // the opponent to move: its line reply
          }
        }
      }
    }
    this.tools = ChessTools.all(Map.copyOf(replies));
  }

  /** Built-in mates in 1, deterministic for {@code seed}; the splits are disjoint by question. */
  public static ChessTask builtin(long seed, int weightSize, int harnessSize, int testSize) {
    if (weightSize < 0 || harnessSize < 0 || testSize < 0) {
      throw new IllegalArgumentException("split sizes must be >= 0");
    }
    MateGenerator gen = new MateGenerator(new Random(seed));
    Set<String> seen = new HashSet<>();
    Map<Split, List<TaskProblem>> splits = new EnumMap<>(Split.class);
    int[] sizes = {weightSize, harnessSize, testSize};
    Split[] order = {Split.WEIGHT, Split.HARNESS, Split.TEST};
    for (int s = 0; s < order.length; s++) {
      List<TaskProblem> list = new ArrayList<>(sizes[s]);
      int attempts = 0;
      while (list.size() < sizes[s]) {
        if (++attempts > 100 * (sizes[s] + 10)) {
          throw new IllegalStateException("cannot generate enough distinct mates in 1");
        }
        MateGenerator.Puzzle p = gen.uniqueMateInOne();
        String q = question("Mate in ", 1, p.game().getFen());
        if (seen.add(q)) {
          String id = String.format(Locale.ROOT, "%s-%s-%04d", NAME, order[s].name().toLowerCase(Locale.ROOT),
              list.size());
          list.add(new TaskProblem(id, q, p.move()));
        }
      }
      splits.put(order[s], Collections.unmodifiableList(list));
    }
    return new ChessTask(splits);
  }

  /**
   * Lichess puzzle CSV files (the test file optional, null), split by {@link LoadedSplits}.
   * {@code trainFile} null: a clear error naming the spec field.
   */
  public static ChessTask lichess(Path trainFile, Path testFile, long dataSeed, int weight, int harness,
      int test) {
    if (trainFile == null) {
      throw new IllegalArgumentException("chess: data.format 'lichess' needs data.trainFile");
    }
    List<TaskProblem> train = LichessLoader.load(trainFile);
    List<TaskProblem> tests = testFile == null ? null : LichessLoader.load(testFile);
    String source = trainFile + (testFile == null ? "" : " + " + testFile);
    return new ChessTask(LoadedSplits.partition(train, tests, dataSeed, weight, harness, test, source));
  }

  static String question(String kind, int solverMoves, String fen) {
    return kind + solverMoves + ". " + FEN_MARKER + fen;
  }

  /** The FEN in a question ("... FEN: <fen>"). */
  public static String fenOf(String question) {
    int i = question.indexOf(FEN_MARKER);
    if (i < 0) {
      throw new IllegalArgumentException("not a chess question (no '" + FEN_MARKER + "'): " + question);
    }
    return question.substring(i + FEN_MARKER.length()).trim();
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<TaskProblem> split(Split split) {
    return splits.get(split);
  }

  /**
   * The line alone, without the trace rule: 1.0 when the answer's moves are exactly the reference
   * line's solver moves (its 1st, 3rd, ... move), in UCI. Scorers use the three-argument form.
   */
  @Override
  public double verify(TaskProblem problem, String answer) {
    if (answer == null) {
      return 0.0;
    }
    String[] ref = problem.answer().trim().split("\\s+");
    List<String> want = new ArrayList<>();
    for (int i = 0; i < ref.length; i += 2) {
      want.add(ref[i].toLowerCase(Locale.ROOT));
    }
    String a = answer.trim().toLowerCase(Locale.ROOT);
    List<String> got = a.isEmpty() ? List.of() : List.of(a.split("\\s+"));
    return got.equals(want) ? 1.0 : 0.0;
  }

  /**
   * The line, and the provenance rule: the harness must not choose moves, so every move of the
   * answer must appear (as a UCI move) in some model completion of the episode.
   */
  @Override
  public double verify(TaskProblem problem, String answer, List<String> completions) {
    if (verify(problem, answer) == 0.0) {
      return 0.0;
    }
    Set<String> written = new HashSet<>();
    for (String c : completions) {
      Matcher m = Boards.UCI.matcher(c == null ? "" : c.toLowerCase(Locale.ROOT));
      while (m.find()) {
        written.add(m.group());
      }
    }
    for (String move : answer.trim().toLowerCase(Locale.ROOT).split("\\s+")) {
      if (!written.contains(move)) {
        return 0.0;
      }
    }
    return 1.0;
  }

  /** An answer is one or more UCI moves separated by spaces. */
  @Override
  public boolean wellFormed(String answer) {
    if (answer == null || answer.isBlank()) {
      return false;
    }
    for (String m : answer.trim().toLowerCase(Locale.ROOT).split("\\s+")) {
      if (!Boards.UCI.matcher(m).matches()) {
        return false;
      }
    }
    return true;
  }

  @Override
  public List<Tool> tools() {
    return tools;
  }

  /**
   * Generic documents over the built-in endgame family, never a position of any split: a position
   * (as "FEN: <fen>" or "Pieces: <list>") then "Move: <a legal move>" (about 60%: notation and
   * legality) or "Mate: <a mating move>" (mates in 1, some with several mates).
   */
  @Override
  public List<String> pretrainingCorpus(long seed, int documents) {
    Random rnd = new Random(seed ^ 0x5DEECE66DL);
    MateGenerator gen = new MateGenerator(rnd);
    List<String> docs = new ArrayList<>(documents);
    while (docs.size() < documents) {
      boolean mate = rnd.nextInt(10) >= 6;
      ChessGame g;
      String move;
      if (mate) {
        MateGenerator.Puzzle p = gen.someMateInOne();
        g = p.game();
        move = p.move();
      } else {
        g = gen.position();
        List<String> legal = Boards.legalUci(g);
        move = legal.get(rnd.nextInt(legal.size()));
      }
      if (positions.contains(Boards.key(g))) {
        continue; // never a split's position, in any presentation
      }
      String board = rnd.nextBoolean() ? "FEN: " + g.getFen() : "Pieces: " + Boards.pieces(g);
      docs.add(board + "\n" + (mate ? "Mate: " : "Move: ") + move + "\n");
    }
    return docs;
  }
}
