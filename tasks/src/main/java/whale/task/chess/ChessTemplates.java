package whale.task.chess;

import static whale.harness.TemplateSearch.percent;

import java.util.ArrayList;
import java.util.List;
import whale.harness.ArchiveView;
import whale.harness.GenomeSpace;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessText;
import whale.harness.TemplateLibrary;
import whale.harness.TemplateSearch;
import whale.harness.TemplateSearch.Judgement;
import whale.harness.TraceStats;
import whale.task.chess.ChessGenome.Axis;

/**
 * The chess task's built-in proposer: the {@link TemplateSearch} over {@link ChessGenome}s, with
 * single-axis changes chosen by what the parent's traces show. Every harness it writes lets the model
 * choose each move: the harness only presents the position, re-asks and counts votes.
 */
public final class ChessTemplates implements TemplateLibrary {
  // later slots take the runner-up on a coin toss: the rule this search was tuned with
  private static final TemplateSearch<ChessGenome, Axis> SEARCH = new TemplateSearch<>(ChessGenome.SPACE,
      ChessGenome.initial(), ChessTemplates::judge, TemplateSearch.Parents.RUNNER_UP_COIN,
      TemplateSearch.Explore.ANY);

  @Override
  public HarnessCandidate initial() {
    return new HarnessCandidate("h0-chess-fen", "the task's starting harness: the raw FEN, a generic"
        + " 'Move:' cue, one sample, the whole completion as the move", "none (starting point)", "initial",
        render(ChessGenome.initial()));
  }

  @Override
  public HarnessCandidate initial(whale.harness.HarnessForm form) {
    if (form != whale.harness.HarnessForm.CHAT) {
      return TemplateLibrary.super.initial(form);
    }
    ChessGenome g = ChessGenome.initial();
    g = new ChessGenome(g.board(), g.cue(), g.votes(), g.retries(), g.parsing(), form);
    return new HarnessCandidate("h0-chess-fen-chat", "the task's starting harness in the chat form ("
        + form.reason() + "): the raw FEN, a generic 'Move:' cue, one sample", "none (starting point)",
        "initial", render(g));
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly) {
    return propose(archive, m, seed, promptOnly, false);
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly,
      boolean chatForm) {
    // Prompt text is the CUE axis: the string literal after the position.
    return SEARCH.propose(archive, m, seed,
        TemplateSearch.allowedAxes(Axis.class, Axis.CUE, Axis.FORM, promptOnly, chatForm));
  }

  /** What the parent's traces say about the change {@code g -> n} on {@code axis}. */
  private static Judgement judge(Axis axis, ChessGenome g, ChessGenome n, TraceStats st) {
    double score = switch (axis) {
      case BOARD, CUE -> 3;
      case VOTES, PARSING -> 2;
      case RETRIES, FORM -> 1;
    };
    String reason = defaultReason(axis, g, n);
    if (st.unparseableFraction() > 0.2) {
      String why = percent(st.unparseableFraction()) + " of answers were not UCI moves; ";
      if (axis == Axis.PARSING && n.parsing() == ChessGenome.Parsing.FIRST_MOVE) {
        score += 4;
        reason = why + "taking the first UCI move of the completion recovers moves wrapped in text";
      } else if (axis == Axis.RETRIES && n.retries() > g.retries()) {
        score += 3;
        reason = why + "re-asking when the model's move is not legal gives it another chance";
      } else if (axis == Axis.CUE) {
        score += 2;
        reason = why + "the " + n.cue() + " cue may make the model answer with a move";
      }
    }
    if (st.turnBudgetFraction() > 0.05) {
      boolean fewer = (axis == Axis.VOTES && n.votes() < g.votes())
          || (axis == Axis.RETRIES && n.retries() < g.retries());
      boolean more = (axis == Axis.VOTES && n.votes() > g.votes())
          || (axis == Axis.RETRIES && n.retries() > g.retries());
      if (fewer) {
        score += 5;
        reason = percent(st.turnBudgetFraction()) + " of episodes hit the turn budget; fewer model calls"
            + " per move keep them within it";
      } else if (more) {
        score -= 3;
      }
    }
    return new Judgement(score, reason);
  }

  private static String defaultReason(Axis axis, ChessGenome from, ChessGenome to) {
    return switch (axis) {
      case BOARD -> switch (to.board()) {
        case FEN -> "the FEN is compact and needs no tool call";
        case PIECES -> "a piece list names every square; a small model reads it more easily than FEN's"
            + " run lengths";
        case ASCII -> "an 8x8 picture shows the geometry of the position";
        case PIECES_LEGAL -> "listing the legal moves lets the model pick from moves it can copy";
      };
      case CUE -> "the '" + to.cue().literal.replace("\\n", "") + "' cue may suit the model better than '"
          + from.cue().literal.replace("\\n", "") + "'";
      case VOTES -> to.votes() > from.votes()
          ? "a majority over " + to.votes() + " sampled moves smooths out sampling errors"
          : "fewer samples per move (" + to.votes() + ") cut turns";
      case RETRIES -> to.retries() > from.retries()
          ? "re-asking when the model's move is illegal (legal-moves tool) recovers moves"
          : "retries cost turns without helping";
      case PARSING -> to.parsing() == ChessGenome.Parsing.FIRST_MOVE
          ? "the first UCI move in the completion ignores text around it"
          : "the whole line is the model's answer as written";
      case FORM -> to.form().reason();
    };
  }

  /**
   * The readable Java source of the harness {@code g}, with the genome embedded: the text blocks below,
   * read top to bottom, their {@code {{name}}} slots filled by {@link HarnessText#fill}.
   */
  public static String render(ChessGenome g) {
    List<String> imports = new ArrayList<>(List.of("java.util.ArrayList", "java.util.List",
        "java.util.regex.Matcher", "java.util.regex.Pattern"));
    imports.addAll(g.form().imports());
    return GenomeSpace.header(g.encode(), imports.toArray(String[]::new))
        + HarnessText.fill("""
          /**
           * Chess template harness {{code}}: the position as {{board}}, then "{{cue}}";
           * {{votes}} per move, {{retries}} re-asks when the move is not legal, move = {{parsing}}.
           * The model writes every move; the environment's replies come from the reply tool.
           */
          public final class {{className}} implements Harness {
            public static final String GENOME = "{{genome}}";
            static final String CUE = "{{cue}}";
            static final int VOTES = {{votesCount}};
            static final int RETRIES = {{retries}};
            static final int MAX_NEW_TOKENS = 8;
            static final Pattern UCI = Pattern.compile("[a-h][1-8][a-h][1-8][qrbn]?");

            @Override
            public HarnessResult solve(Problem problem, HarnessContext ctx) {
              String q = problem.question();
              String fen = q.substring(q.indexOf("FEN: ") + 5).trim();
              int moves = Math.max(1, firstInt(q));
              List<String> answer = new ArrayList<>();
              for (int i = 0; i < moves; i++) {
                String move = ask(ctx, fen);
                if (move == null) {
                  break;
                }
                answer.add(move);
                if (i + 1 < moves) {
                  // the environment answers: play the model's move, then the opponent's reply
                  String next = ctx.tool("move", fen + " | " + move);
                  String reply = next.startsWith("error") ? "none" : ctx.tool("reply", next);
                  if (reply.equals("none") || reply.startsWith("error")) {
                    break;
                  }
                  fen = ctx.tool("move", next + " | " + reply);
                }
              }
              return HarnessResult.of(String.join(" ", answer));
            }

            /** The prompt: the position, then the cue. */
            static String prompt(HarnessContext ctx, String fen) {
          """,
            "code", g.code(),
            "board", g.board(),
            "cue", g.cue().literal,
            "votes", g.votes() == 1 ? "one sample" : "majority of " + g.votes() + " samples",
            "votesCount", g.votes(),
            "retries", g.retries(),
            "parsing", g.parsing() == ChessGenome.Parsing.WHOLE_LINE ? "whole line" : "first UCI move",
            "className", g.className(),
            "genome", g.encode())
        + switch (g.board()) {
          case FEN -> """
                  return "FEN: " + fen + CUE;
              """;
          case PIECES -> """
                  return "Pieces: " + ctx.tool("pieces", fen) + CUE;
              """;
          case ASCII -> """
                  return ctx.tool("ascii", fen) + CUE;
              """;
          case PIECES_LEGAL -> """
                  return "Pieces: " + ctx.tool("pieces", fen) + "\\nLegal: "
                      + ctx.tool("legal", fen) + CUE;
              """;
        }
        + HarnessText.fill("""
            }

            /** The model's move: the majority of VOTES samples (ties: first seen), or null. */
            private String ask(HarnessContext ctx, String fen) {
              String prompt = prompt(ctx, fen);
              List<String> seen = new ArrayList<>();
              String best = null;
              int bestCount = 0;
              for (int v = 0; v < VOTES; v++) {
                String m = sample(ctx, prompt, fen);
                if (m == null) {
                  continue;
                }
                seen.add(m);
                int count = 0;
                for (String x : seen) {
                  if (x.equals(m)) {
                    count++;
                  }
                }
                if (count > bestCount) {
                  best = m;
                  bestCount = count;
                }
              }
              return best;
            }

            /** One parsed move; re-asks up to RETRIES times while it is not legal. */
            private String sample(HarnessContext ctx, String prompt, String fen) {
              String last = null;
              for (int attempt = 0; attempt <= RETRIES; attempt++) {
                if (ctx.turnsUsed() >= ctx.turnBudget()) {
                  return last;
                }
                String m = parse({{call}});
                if (m != null) {
                  last = m;
                  if (RETRIES == 0 || (" " + ctx.tool("legal", fen) + " ").contains(" " + m + " ")) {
                    return m;
                  }
                  ctx.note("illegal move " + m + "; asking again");
                }
              }
              return last;
            }

          """, "call", g.form().call())
        + (g.parsing() == ChessGenome.Parsing.WHOLE_LINE ? """
              /** The completion's line, trimmed; null when empty. */
              static String parse(String completion) {
                String line = completion.trim();
                return line.isEmpty() ? null : line;
              }

            """ : """
              /** The first UCI move in the completion, or null. */
              static String parse(String completion) {
                Matcher m = UCI.matcher(completion.toLowerCase());
                return m.find() ? m.group() : null;
              }

            """)
        + """
            /** The first integer of the text (the number of moves to play), or 1. */
            static int firstInt(String text) {
              Matcher m = Pattern.compile("\\\\d+").matcher(text);
              return m.find() ? Integer.parseInt(m.group()) : 1;
            }
          }
          """;
  }
}
