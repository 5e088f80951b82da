package whale.task.chess;

import static whale.harness.TemplateSearch.percent;

import java.util.ArrayList;
import java.util.List;
import whale.harness.ArchiveView;
import whale.harness.GenomeSpace;
import whale.harness.HarnessCandidate;
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

  /** The readable Java source of the harness {@code g}, with the genome embedded. */
  public static String render(ChessGenome g) {
    List<String> imports = new ArrayList<>(List.of("java.util.ArrayList", "java.util.List",
        "java.util.regex.Matcher", "java.util.regex.Pattern"));
    imports.addAll(g.form().imports());
    StringBuilder s = new StringBuilder(GenomeSpace.header(g.encode(), imports.toArray(String[]::new)));
    s.append("/**\n");
    s.append(" * Chess template harness ").append(g.code()).append(": the position as ").append(g.board())
        .append(", then \"").append(g.cue().literal).append("\";\n");
    s.append(" * ").append(g.votes() == 1 ? "one sample" : "majority of " + g.votes() + " samples")
        .append(" per move, ").append(g.retries()).append(" re-asks when the move is not legal, move = ")
        .append(g.parsing() == ChessGenome.Parsing.WHOLE_LINE ? "whole line" : "first UCI move")
        .append(".\n");
    s.append(" * The model writes every move; the environment's replies come from the reply tool.\n");
    s.append(" */\n");
    s.append("public final class ").append(g.className()).append(" implements Harness {\n");
    s.append("  public static final String GENOME = \"").append(g.encode()).append("\";\n");
    s.append("  static final String CUE = \"").append(g.cue().literal).append("\";\n");
    s.append("  static final int VOTES = ").append(g.votes()).append(";\n");
    s.append("  static final int RETRIES = ").append(g.retries()).append(";\n");
    s.append("  static final int MAX_NEW_TOKENS = 8;\n");
    s.append("  static final Pattern UCI = Pattern.compile(\"[a-h][1-8][a-h][1-8][qrbn]?\");\n\n");

    s.append("  @Override\n");
    s.append("  public HarnessResult solve(Problem problem, HarnessContext ctx) {\n");
    s.append("    String q = problem.question();\n");
    s.append("    String fen = q.substring(q.indexOf(\"FEN: \") + 5).trim();\n");
    s.append("    int moves = Math.max(1, firstInt(q));\n");
    s.append("    List<String> answer = new ArrayList<>();\n");
    s.append("    for (int i = 0; i < moves; i++) {\n");
    s.append("      String move = ask(ctx, fen);\n");
    s.append("      if (move == null) {\n");
    s.append("        break;\n");
    s.append("      }\n");
    s.append("      answer.add(move);\n");
    s.append("      if (i + 1 < moves) {\n");
    s.append("        // the environment answers: play the model's move, then the opponent's reply\n");
    s.append("        String next = ctx.tool(\"move\", fen + \" | \" + move);\n");
    s.append("        String reply = next.startsWith(\"error\") ? \"none\" : ctx.tool(\"reply\", next);\n");
    s.append("        if (reply.equals(\"none\") || reply.startsWith(\"error\")) {\n");
    s.append("          break;\n");
    s.append("        }\n");
    s.append("        fen = ctx.tool(\"move\", next + \" | \" + reply);\n");
    s.append("      }\n");
    s.append("    }\n");
    s.append("    return HarnessResult.of(String.join(\" \", answer));\n");
    s.append("  }\n\n");

    s.append("  /** The prompt: the position, then the cue. */\n");
    s.append("  static String prompt(HarnessContext ctx, String fen) {\n");
    switch (g.board()) {
      case FEN -> s.append("    return \"FEN: \" + fen + CUE;\n");
      case PIECES -> s.append("    return \"Pieces: \" + ctx.tool(\"pieces\", fen) + CUE;\n");
      case ASCII -> s.append("    return ctx.tool(\"ascii\", fen) + CUE;\n");
      case PIECES_LEGAL -> s.append("    return \"Pieces: \" + ctx.tool(\"pieces\", fen) + \"\\nLegal: \"\n")
          .append("        + ctx.tool(\"legal\", fen) + CUE;\n");
      default -> throw new IllegalStateException();
    }
    s.append("  }\n\n");

    s.append("  /** The model's move: the majority of VOTES samples (ties: first seen), or null. */\n");
    s.append("  private String ask(HarnessContext ctx, String fen) {\n");
    s.append("    String prompt = prompt(ctx, fen);\n");
    s.append("    List<String> seen = new ArrayList<>();\n");
    s.append("    String best = null;\n");
    s.append("    int bestCount = 0;\n");
    s.append("    for (int v = 0; v < VOTES; v++) {\n");
    s.append("      String m = sample(ctx, prompt, fen);\n");
    s.append("      if (m == null) {\n");
    s.append("        continue;\n");
    s.append("      }\n");
    s.append("      seen.add(m);\n");
    s.append("      int count = 0;\n");
    s.append("      for (String x : seen) {\n");
    s.append("        if (x.equals(m)) {\n");
    s.append("          count++;\n");
    s.append("        }\n");
    s.append("      }\n");
    s.append("      if (count > bestCount) {\n");
    s.append("        best = m;\n");
    s.append("        bestCount = count;\n");
    s.append("      }\n");
    s.append("    }\n");
    s.append("    return best;\n");
    s.append("  }\n\n");

    s.append("  /** One parsed move; re-asks up to RETRIES times while it is not legal. */\n");
    s.append("  private String sample(HarnessContext ctx, String prompt, String fen) {\n");
    s.append("    String last = null;\n");
    s.append("    for (int attempt = 0; attempt <= RETRIES; attempt++) {\n");
    s.append("      if (ctx.turnsUsed() >= ctx.turnBudget()) {\n");
    s.append("        return last;\n");
    s.append("      }\n");
    s.append("      String m = parse(" + g.form().call() + ");\n");
    s.append("      if (m != null) {\n");
    s.append("        last = m;\n");
    s.append("        if (RETRIES == 0 || (\" \" + ctx.tool(\"legal\", fen) + \" \").contains(\" \" + m + \" \")) {\n");
    s.append("          return m;\n");
    s.append("        }\n");
    s.append("        ctx.note(\"illegal move \" + m + \"; asking again\");\n");
    s.append("      }\n");
    s.append("    }\n");
    s.append("    return last;\n");
    s.append("  }\n\n");

    if (g.parsing() == ChessGenome.Parsing.WHOLE_LINE) {
      s.append("  /** The completion's line, trimmed; null when empty. */\n");
      s.append("  static String parse(String completion) {\n");
      s.append("    String line = completion.trim();\n");
      s.append("    return line.isEmpty() ? null : line;\n");
      s.append("  }\n\n");
    } else {
      s.append("  /** The first UCI move in the completion, or null. */\n");
      s.append("  static String parse(String completion) {\n");
      s.append("    Matcher m = UCI.matcher(completion.toLowerCase());\n");
      s.append("    return m.find() ? m.group() : null;\n");
      s.append("  }\n\n");
    }

    s.append("  /** The first integer of the text (the number of moves to play), or 1. */\n");
    s.append("  static int firstInt(String text) {\n");
    s.append("    Matcher m = Pattern.compile(\"\\\\d+\").matcher(text);\n");
    s.append("    return m.find() ? Integer.parseInt(m.group()) : 1;\n");
    s.append("  }\n");
    s.append("}\n");
    return s.toString();
  }
}
