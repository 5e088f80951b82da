package whale.task.chess;

import io.github.wolfraam.chessgame.ChessGame;
import java.util.List;
import java.util.Map;
import whale.task.Tool;

/**
 * The chess tools a harness may call. Tools are stateless, so every input carries the position:
 * {@code FEN}, or {@code FEN | m1 m2 ...} to first play UCI moves from it. Bad input gives a text
 * starting with "error:" (never an exception), so a harness can show it or re-ask.
 */
final class ChessTools {
  private ChessTools() {}

  static List<Tool> all(Map<String, String> replies) {
    return List.of(
        tool("fen", "the position as FEN (input: FEN [| UCI moves to play first])",
            g -> g.getFen()),
        tool("ascii", "the board as 8 lines of 8 characters, rank 8 first ('.' empty), then the side to"
            + " move (input: FEN [| moves])", Boards::ascii),
        tool("pieces", "the pieces as a list, e.g. 'Kf6 Qh1 kg8 w' (upper case white, then the side to"
            + " move) (input: FEN [| moves])", Boards::pieces),
        tool("legal", "the legal moves of the side to move in UCI, sorted, space separated; 'none' when"
            + " there are none (input: FEN [| moves])", g -> {
              List<String> moves = Boards.legalUci(g);
              return moves.isEmpty() ? "none" : String.join(" ", moves);
            }),
        new Tool() {
          @Override
          public String name() {
            return "move";
          }

          @Override
          public String description() {
            return "plays one UCI move: input 'FEN | move', output the new FEN, or 'error: illegal move"
                + " ...' when the move is not legal";
          }

          @Override
          public String apply(String input) {
            String[] parts = input.split("\\|", 2);
            if (parts.length != 2 || parts[1].trim().split("\\s+").length != 1) {
              return "error: input must be 'FEN | move' with one UCI move, got '" + input + "'";
            }
            return position(input).map(ChessGame::getFen);
          }
        },
        tool("reply", "the opponent's reply in the position (input: FEN [| moves], the opponent to"
            + " move): the puzzle line's reply on a puzzle line, else a fixed legal move; 'none' when"
            + " the game is over", g -> reply(g, replies)));
  }

  /**
   * The reference reply when the position lies on a puzzle's line, else a legal move picked by the
   * position's hash, so the answer never tells a harness whether it left the line.
   */
  static String reply(ChessGame g, Map<String, String> replies) {
    List<String> legal = Boards.legalUci(g);
    if (legal.isEmpty()) {
      return "none";
    }
    String ref = replies.get(Boards.key(g));
    if (ref != null && legal.contains(ref)) {
      return ref;
    }
    return legal.get(Math.floorMod(Boards.key(g).hashCode(), legal.size()));
  }

  private interface Render {
    String of(ChessGame g);
  }

  /** The position of an input, or the error text to return. */
  record Position(ChessGame game, String error) {
    String map(Render r) {
      return error != null ? error : r.of(game);
    }
  }

  static Position position(String input) {
    String[] parts = (input == null ? "" : input).split("\\|", 2);
    ChessGame g;
    try {
      g = Boards.game(parts[0]);
    } catch (IllegalArgumentException e) {
      return new Position(null, "error: " + e.getMessage());
    }
    if (parts.length == 2) {
      for (String m : parts[1].trim().split("\\s+")) {
        if (m.isEmpty()) {
          continue;
        }
        if (!Boards.play(g, m)) {
          return new Position(null, "error: illegal move " + m + " in " + g.getFen());
        }
      }
    }
    return new Position(g, null);
  }

  private static Tool tool(String name, String description, Render render) {
    return new Tool() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public String description() {
        return description;
      }

      @Override
      public String apply(String input) {
        return position(input).map(render);
      }
    };
  }
}
