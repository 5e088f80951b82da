package whale.task.chess;

import java.util.List;
import whale.harness.Genome;
import whale.harness.GenomeSpace;
import whale.harness.HarnessForm;

/**
 * The building blocks of a chess template harness, embedded in the emitted source as
 * {@code // WHALE-GENOME: board=PIECES;cue=MATE;votes=3;retries=1;parse=FIRST_MOVE}; FORM (only with
 * {@code harness.chatForm}; CHAT appends ";form=CHAT") sends the same prompt, position and cue, as
 * the user's message through the model's chat template.
 */
public record ChessGenome(Board board, Cue cue, int votes, int retries, Parsing parsing, HarnessForm form)
    implements Genome<ChessGenome, ChessGenome.Axis> {
  /** CUE is the only prompt-text axis (the Fast-Slow control's). */
  public static final GenomeSpace<ChessGenome, Axis> SPACE = GenomeSpace.<ChessGenome, Axis>of(Axis.class)
      .axis(Axis.BOARD, "board", ChessGenome::board, List.of(Board.values()))
      .axis(Axis.CUE, "cue", ChessGenome::cue, List.of(Cue.values()))
      .axis(Axis.VOTES, "votes", ChessGenome::votes, List.of(1, 3, 5))
      .axis(Axis.RETRIES, "retries", ChessGenome::retries, List.of(0, 1, 2))
      .axis(Axis.PARSING, "parse", ChessGenome::parsing, List.of(Parsing.values()))
      // the completion form is left out of the genome line: archived genomes keep their sources
      .axis(Axis.FORM, "form", ChessGenome::form, List.of(HarnessForm.COMPLETION, HarnessForm.CHAT), HarnessForm.COMPLETION)
      .build(v -> new ChessGenome((Board) v.get(0), (Cue) v.get(1), (Integer) v.get(2), (Integer) v.get(3),
          (Parsing) v.get(4), (HarnessForm) v.get(5)), ChessTemplates::render);

  /** A completion-form genome (the five axes before FORM existed). */
  public ChessGenome(Board board, Cue cue, int votes, int retries, Parsing parsing) {
    this(board, cue, votes, retries, parsing, HarnessForm.COMPLETION);
  }

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

  /** The axes a mutation changes. */
  public enum Axis { BOARD, CUE, VOTES, RETRIES, PARSING, FORM }

  /** h0, deliberately unoptimised: the raw FEN, a generic "Move:" cue, one sample, the whole line. */
  public static ChessGenome initial() {
    return new ChessGenome(Board.FEN, Cue.MOVE, 1, 0, Parsing.WHOLE_LINE);
  }

  @Override
  public GenomeSpace<ChessGenome, Axis> space() {
    return SPACE;
  }

  /** Short readable code, e.g. "pieces-mate-v3-r1-first". */
  @Override
  public String code() {
    return board.name().toLowerCase().replace("_", "") + "-" + cue.name().toLowerCase() + "-v" + votes
        + "-r" + retries + "-" + (parsing == Parsing.WHOLE_LINE ? "line" : "first") + form.codeSuffix();
  }

  public String className() {
    return "Chess_" + code().replace('-', '_');
  }
}
