package whale.task.chess;

import io.github.wolfraam.chessgame.ChessGame;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import whale.task.TaskProblem;

/**
 * The Lichess puzzle database CSV (header PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,
 * NbPlays,Themes,GameUrl,OpeningTags). Lichess's FEN is the position before the opponent's last move:
 * the first move of Moves is the opponent's and is played before the puzzle starts; the rest is the
 * reference line (solver, opponent, solver, ...). A malformed file is rejected with its name and line.
 */
final class LichessLoader {
  static final List<String> HEADER = List.of("PuzzleId", "FEN", "Moves", "Rating", "RatingDeviation",
      "Popularity", "NbPlays", "Themes", "GameUrl", "OpeningTags");

  private LichessLoader() {}

  static List<TaskProblem> load(Path file) {
    List<TaskProblem> out = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String header = r.readLine();
      if (header == null) {
        throw new IllegalArgumentException(file + ":1: empty file; expected the Lichess puzzle header "
            + String.join(",", HEADER));
      }
      List<String> cols = split(header.strip().replace("\uFEFF", ""));
      Map<String, Integer> at = new HashMap<>();
      for (int i = 0; i < cols.size(); i++) {
        at.put(cols.get(i).trim(), i);
      }
      for (String need : List.of("PuzzleId", "FEN", "Moves")) {
        if (!at.containsKey(need)) {
          throw new IllegalArgumentException(file + ":1: the header has no " + need + " column; expected "
              + String.join(",", HEADER) + ", got " + header);
        }
      }
      String line;
      int lineNo = 1;
      while ((line = r.readLine()) != null) {
        lineNo++;
        if (line.isBlank()) {
          continue;
        }
        try {
          out.add(problem(split(line), at));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(file + ":" + lineNo + ": " + e.getMessage(), e);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(file + ": no puzzles after the header");
    }
    return out;
  }

  private static TaskProblem problem(List<String> f, Map<String, Integer> at) {
    int need = Math.max(at.get("PuzzleId"), Math.max(at.get("FEN"), at.get("Moves"))) + 1;
    if (f.size() < need) {
      throw new IllegalArgumentException(f.size() + " columns, expected at least " + need);
    }
    String id = f.get(at.get("PuzzleId")).trim();
    if (id.isEmpty()) {
      throw new IllegalArgumentException("empty PuzzleId");
    }
    ChessGame g = Boards.game(f.get(at.get("FEN")));
    String[] moves = f.get(at.get("Moves")).trim().split("\\s+");
    if (moves.length < 2 || moves[0].isEmpty()) {
      throw new IllegalArgumentException("Moves must hold the opponent's move and at least one solver "
          + "move, got '" + f.get(at.get("Moves")) + "'");
    }
    if (!Boards.play(g, moves[0])) {
      throw new IllegalArgumentException("the first move " + moves[0] + " is not legal in the FEN");
    }
    String start = g.getFen();
    for (int i = 1; i < moves.length; i++) {
      if (!Boards.play(g, moves[i])) {
        throw new IllegalArgumentException("move " + (i + 1) + " (" + moves[i] + ") is not legal");
      }
    }
    int solverMoves = moves.length / 2; // moves[1], moves[3], ...
    String themes = at.containsKey("Themes") && at.get("Themes") < f.size() ? f.get(at.get("Themes")) : "";
    String kind = themes.contains("mate") ? "Mate in " : "Solve in ";
    String line = String.join(" ", java.util.Arrays.copyOfRange(moves, 1, moves.length)).toLowerCase();
    return new TaskProblem("lichess-" + id, kind + solverMoves + ". FEN: " + start, line);
  }

  /** One CSV record: comma separated, with optional double quotes ("" inside quotes is a quote). */
  static List<String> split(String line) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quoted) {
        if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
          cur.append('"');
          i++;
        } else if (c == '"') {
          quoted = false;
        } else {
          cur.append(c);
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        out.add(cur.toString());
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    if (quoted) {
      throw new IllegalArgumentException("unterminated quoted field");
    }
    out.add(cur.toString());
    return out;
  }
}
