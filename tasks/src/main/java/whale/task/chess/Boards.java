package whale.task.chess;

import io.github.wolfraam.chessgame.ChessGame;
import io.github.wolfraam.chessgame.board.Piece;
import io.github.wolfraam.chessgame.board.Side;
import io.github.wolfraam.chessgame.board.Square;
import io.github.wolfraam.chessgame.move.Move;
import io.github.wolfraam.chessgame.notation.NotationType;
import io.github.wolfraam.chessgame.result.ChessGameResultType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Thin helpers over the chessgame library (legality, check and mate all come from it): parsing FEN,
 * UCI moves as text, and the position presentations the task's tools and corpus use.
 */
final class Boards {
  /** A UCI move: from, to, optional promotion piece. */
  static final Pattern UCI = Pattern.compile("[a-h][1-8][a-h][1-8][qrbn]?");

  /** White pieces first, in this order, then black's; kings lead so a reader finds them first. */
  private static final String ORDER = "KQRBNPkqrbnp";

  private Boards() {}

  /** The position of {@code fen}; a clear IllegalArgumentException when it is not a FEN. */
  static ChessGame game(String fen) {
    String f = fen == null ? "" : fen.trim();
    try {
      ChessGame g = new ChessGame(f);
      if (g.getSquares(Piece.WHITE_KING).size() != 1 || g.getSquares(Piece.BLACK_KING).size() != 1) {
        throw new IllegalArgumentException("invalid FEN '" + f + "': each side needs exactly one king");
      }
      return g;
    } catch (IllegalArgumentException e) {
      throw e.getMessage() != null && e.getMessage().startsWith("invalid FEN") ? e
          : new IllegalArgumentException("invalid FEN '" + f + "'", e);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("invalid FEN '" + f + "'", e);
    }
  }

  /** The legal moves of the side to move in UCI, sorted. */
  static List<String> legalUci(ChessGame g) {
    List<String> out = new ArrayList<>();
    for (Move m : g.getLegalMoves()) {
      out.add(g.getNotation(NotationType.UCI, m));
    }
    out.sort(Comparator.naturalOrder());
    return out;
  }

  /**
   * Plays {@code uci} when it is legal and returns true; returns false and leaves the game unchanged
   * otherwise (the library itself fails with a NullPointerException on some illegal UCI text).
   */
  static boolean play(ChessGame g, String uci) {
    String u = uci == null ? "" : uci.trim().toLowerCase();
    if (!UCI.matcher(u).matches()) {
      return false;
    }
    for (Move m : g.getLegalMoves()) {
      if (g.getNotation(NotationType.UCI, m).equals(u)) {
        g.playMove(m);
        return true;
      }
    }
    return false;
  }

  /** True when the side to move is checkmated. */
  static boolean mated(ChessGame g) {
    ChessGameResultType r = g.getGameResultType();
    return r == ChessGameResultType.WHITE_WINS || r == ChessGameResultType.BLACK_WINS;
  }

  /** The UCI moves that checkmate at once, sorted. */
  static List<String> matingMoves(ChessGame g) {
    List<String> out = new ArrayList<>();
    for (Move m : g.getLegalMoves()) {
      ChessGame c = g.clone();
      c.playMove(m);
      if (c.isKingAttacked() && mated(c)) {
        out.add(g.getNotation(NotationType.UCI, m));
      }
    }
    out.sort(Comparator.naturalOrder());
    return out;
  }

  /**
   * The piece list: "Kf6 Qh1 kg8 w" (FEN letters, upper case white, then the side to move). Squares
   * are explicit, which a small character model reads far more easily than FEN's run lengths.
   */
  static String pieces(ChessGame g) {
    List<String> items = new ArrayList<>();
    for (char c : ORDER.toCharArray()) {
      List<String> squares = new ArrayList<>();
      for (Square s : g.getSquares(Piece.fromFenNotation(c))) {
        squares.add(s.name.toLowerCase());
      }
      squares.sort(Comparator.naturalOrder());
      for (String s : squares) {
        items.add(c + s);
      }
    }
    return String.join(" ", items) + (g.getSideToMove() == Side.WHITE ? " w" : " b");
  }

  /** The board as 8 lines of 8 characters, rank 8 first, '.' for an empty square, then the side to move. */
  static String ascii(ChessGame g) {
    StringBuilder sb = new StringBuilder();
    for (int rank = 8; rank >= 1; rank--) {
      for (char file = 'a'; file <= 'h'; file++) {
        Piece p = g.getPiece(Square.fromName("" + file + rank));
        sb.append(p == null ? '.' : p.fenCharacter);
      }
      sb.append('\n');
    }
    return sb.append(g.getSideToMove() == Side.WHITE ? "white to move" : "black to move").toString();
  }

  /** Position key for disjointness: the FEN's placement, side to move, castling and en passant. */
  static String key(ChessGame g) {
    String[] f = g.getFen().split(" ");
    return f[0] + " " + f[1] + " " + f[2] + " " + f[3];
  }
}
