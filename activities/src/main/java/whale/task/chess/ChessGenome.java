package whale.task.chess;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import whale.harness.HarnessGenome;

/**
 * The building blocks of a chess template harness, encoded as
 * {@code board=PIECES;cue=MATE;votes=3;retries=1;parse=FIRST_MOVE} and embedded in the emitted source
 * as a {@code // WHALE-GENOME: ...} comment (the marker the math templates use).
 */
public record ChessGenome(Board board, Cue cue, int votes, int retries, Parsing parsing) {
  public static final List<Integer> VOTE_VALUES = List.of(1, 3, 5);
  public static final List<Integer> RETRY_VALUES = List.of(0, 1, 2);
  private static final Pattern IN_SOURCE = Pattern.compile(Pattern.quote(HarnessGenome.MARKER) + "\\s*(\\S+)");

  /** How the position is shown to the model. */
  public enum Board {
    /** The question's FEN as is. */
    FEN,
    /** The piece list tool's "Kf6 Qh1 kg8 w": every square explicit. */
    PIECES,
    /** The ASCII board tool's 8 lines. */
    ASCII,
    /** The piece list, then the legal-moves tool's list. */
    PIECES_LEGAL
  }

  /** The prompt text after the position (a Java string literal, escaped). */
  public enum Cue {
    MOVE("\\nMove:"),
    MATE("\\nMate:"),
    BEST("\\nBest move:");

    public final String literal;

    Cue(String literal) {
      this.literal = literal;
    }
  }

  /** Which part of a completion is the move. */
  public enum Parsing { WHOLE_LINE, FIRST_MOVE }

  /** The axes a mutation changes; CUE is the only prompt-text axis (the Fast-Slow control's). */
  public enum Axis { BOARD, CUE, VOTES, RETRIES, PARSING }

  public ChessGenome {
    if (!VOTE_VALUES.contains(votes) || !RETRY_VALUES.contains(retries)) {
      throw new IllegalArgumentException("genome out of range: votes " + votes + ", retries " + retries);
    }
  }

  /** h0, deliberately unoptimised: the raw FEN, a generic "Move:" cue, one sample, the whole line. */
  public static ChessGenome initial() {
    return new ChessGenome(Board.FEN, Cue.MOVE, 1, 0, Parsing.WHOLE_LINE);
  }

  public String encode() {
    return "board=" + board + ";cue=" + cue + ";votes=" + votes + ";retries=" + retries + ";parse=" + parsing;
  }

  public static ChessGenome parse(String encoded) {
    Board b = null;
    Cue c = null;
    Parsing p = null;
    int v = -1;
    int r = -1;
    for (String kv : encoded.trim().split(";")) {
      String[] x = kv.split("=", 2);
      if (x.length != 2) {
        throw new IllegalArgumentException("bad chess genome " + encoded);
      }
      switch (x[0]) {
        case "board" -> b = Board.valueOf(x[1]);
        case "cue" -> c = Cue.valueOf(x[1]);
        case "votes" -> v = Integer.parseInt(x[1]);
        case "retries" -> r = Integer.parseInt(x[1]);
        case "parse" -> p = Parsing.valueOf(x[1]);
        default -> throw new IllegalArgumentException("unknown chess genome key " + x[0]);
      }
    }
    if (b == null || c == null || p == null) {
      throw new IllegalArgumentException("incomplete chess genome " + encoded);
    }
    return new ChessGenome(b, c, v, r, p);
  }

  /** The genome embedded in a source, or null when there is none or it is not a chess genome. */
  public static ChessGenome fromSource(String source) {
    if (source == null) {
      return null;
    }
    Matcher m = IN_SOURCE.matcher(source);
    if (!m.find()) {
      return null;
    }
    try {
      return parse(m.group(1));
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Short readable code, e.g. "pieces-mate-v3-r1-first". */
  public String code() {
    return board.name().toLowerCase().replace("_", "") + "-" + cue.name().toLowerCase() + "-v" + votes
        + "-r" + retries + "-" + (parsing == Parsing.WHOLE_LINE ? "line" : "first");
  }

  public String className() {
    return "Chess_" + code().replace('-', '_');
  }

  public String value(Axis axis) {
    return switch (axis) {
      case BOARD -> board.name();
      case CUE -> cue.name();
      case VOTES -> Integer.toString(votes);
      case RETRIES -> Integer.toString(retries);
      case PARSING -> parsing.name();
    };
  }

  /** Every genome that differs from this one on {@code axis} only. */
  public List<ChessGenome> neighbours(Axis axis) {
    List<ChessGenome> out = new ArrayList<>();
    switch (axis) {
      case BOARD -> {
        for (Board x : Board.values()) {
          out.add(new ChessGenome(x, cue, votes, retries, parsing));
        }
      }
      case CUE -> {
        for (Cue x : Cue.values()) {
          out.add(new ChessGenome(board, x, votes, retries, parsing));
        }
      }
      case VOTES -> {
        for (int x : VOTE_VALUES) {
          out.add(new ChessGenome(board, cue, x, retries, parsing));
        }
      }
      case RETRIES -> {
        for (int x : RETRY_VALUES) {
          out.add(new ChessGenome(board, cue, votes, x, parsing));
        }
      }
      case PARSING -> {
        for (Parsing x : Parsing.values()) {
          out.add(new ChessGenome(board, cue, votes, retries, x));
        }
      }
      default -> throw new IllegalStateException();
    }
    out.remove(this);
    return out;
  }

  /** All genomes, in a fixed order. */
  public static List<ChessGenome> all() {
    List<ChessGenome> out = new ArrayList<>();
    for (Board b : Board.values()) {
      for (Cue c : Cue.values()) {
        for (int v : VOTE_VALUES) {
          for (int r : RETRY_VALUES) {
            for (Parsing p : Parsing.values()) {
              out.add(new ChessGenome(b, c, v, r, p));
            }
          }
        }
      }
    }
    return out;
  }
}
