package whale.task.chess;

import io.github.wolfraam.chessgame.ChessGame;
import java.util.List;
import java.util.Random;

/**
 * Sparse endgame positions, white to move: K+Q or K+R against a lone king. The black king stands on
 * an edge and the white king near it (every K+Q/K+R mate looks like that), which keeps the share of
 * positions with a mate in 1 high enough to sample. Legality, check and mate come from the library.
 */
final class MateGenerator {
  private final Random rnd;

  MateGenerator(Random rnd) {
    this.rnd = rnd;
  }

  /** A legal position, white to move, black not in check. */
  ChessGame position() {
    while (true) {
      int bk = edgeSquare();
      int bx = bk % 8;
      int by = bk / 8;
      int wx = clamp(bx + rnd.nextInt(7) - 3);
      int wy = clamp(by + rnd.nextInt(7) - 3);
      if (Math.max(Math.abs(wx - bx), Math.abs(wy - by)) < 2) {
        continue; // kings may not touch
      }
      int wk = wy * 8 + wx;
      int piece = rnd.nextInt(64);
      if (piece == wk || piece == bk) {
        continue;
      }
      char[] board = new char[64];
      board[bk] = 'k';
      board[wk] = 'K';
      board[piece] = rnd.nextBoolean() ? 'Q' : 'R';
      String placement = placement(board);
      // The side not to move may not be in check: with black to move, black is not in check.
      ChessGame asBlack = Boards.game(placement + " b - - 0 1");
      if (asBlack.isKingAttacked()) {
        continue;
      }
      return Boards.game(placement + " w - - 0 1");
    }
  }

  /** A position whose only mate in 1 is its one mating move; never returns a position without one. */
  Puzzle uniqueMateInOne() {
    while (true) {
      ChessGame g = position();
      List<String> mates = Boards.matingMoves(g);
      if (mates.size() == 1) {
        return new Puzzle(g, mates.get(0));
      }
    }
  }

  /** A position with at least one mate in 1, and one of its mating moves. */
  Puzzle someMateInOne() {
    while (true) {
      ChessGame g = position();
      List<String> mates = Boards.matingMoves(g);
      if (!mates.isEmpty()) {
        return new Puzzle(g, mates.get(rnd.nextInt(mates.size())));
      }
    }
  }

  record Puzzle(ChessGame game, String move) {}

  private int edgeSquare() {
    int i = rnd.nextInt(28);
    if (i < 8) {
      return i; // rank 1
    }
    if (i < 16) {
      return 56 + (i - 8); // rank 8
    }
    int rank = 1 + (i - 16) % 6;
    return rank * 8 + (i < 22 ? 0 : 7); // files a and h, ranks 2..7
  }

  private static int clamp(int v) {
    return Math.max(0, Math.min(7, v));
  }

  /** FEN piece placement of a board indexed rank * 8 + file (a1 = 0). */
  private static String placement(char[] board) {
    StringBuilder sb = new StringBuilder();
    for (int rank = 7; rank >= 0; rank--) {
      int empty = 0;
      for (int file = 0; file < 8; file++) {
        char c = board[rank * 8 + file];
        if (c == 0) {
          empty++;
        } else {
          if (empty > 0) {
            sb.append(empty);
            empty = 0;
          }
          sb.append(c);
        }
      }
      if (empty > 0) {
        sb.append(empty);
      }
      if (rank > 0) {
        sb.append('/');
      }
    }
    return sb.toString();
  }
}
