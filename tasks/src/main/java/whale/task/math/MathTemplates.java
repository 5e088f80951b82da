package whale.task.math;

import static whale.harness.TemplateSearch.percent;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import whale.task.math.MathGenome.Axis;
import whale.task.math.MathGenome.Decomposition;
import whale.harness.TemplateSearch.Judgement;
import whale.harness.ArchiveView;
import whale.harness.GenomeSpace;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessForm;
import whale.harness.HarnessText;
import whale.harness.TemplateLibrary;
import whale.harness.TemplateSearch;
import whale.harness.TraceStats;

/**
 * The math task's built-in, offline, deterministic Meta-Harness proposer: the {@link TemplateSearch}
 * over {@link MathGenome}s, with single-axis changes chosen by what the parent's traces show (many
 * unparseable answers → parsing, retries, prompt format; turn-budget hits → fewer votes/retries;
 * failed episodes → decomposition; otherwise prompt format and decomposition first).
 */
public final class MathTemplates implements TemplateLibrary {
  private static final TemplateSearch<MathGenome, Axis> SEARCH =
      new TemplateSearch<>(MathGenome.SPACE, MathGenome.initial(), MathTemplates::judge);

  private final Set<Axis> axes;

  /** A proposer that may change every axis but FORM (that one only with harness.chatForm). */
  public MathTemplates() {
    this(EnumSet.complementOf(EnumSet.of(Axis.FORM)));
  }

  /** A proposer restricted to {@code axes}; the Fast-Slow control uses {@code EnumSet.of(Axis.FORMAT)}. */
  public MathTemplates(Set<Axis> axes) {
    if (axes.isEmpty()) {
      throw new IllegalArgumentException("no axis to mutate");
    }
    this.axes = EnumSet.copyOf(axes);
  }

  /** h0: the deliberately unoptimised direct harness of {@link MathGenome#initial()}. */
  public static String initialHarnessSource() {
    return render(MathGenome.initial());
  }

  @Override
  public HarnessCandidate initial() {
    return new HarnessCandidate("h0-qa-direct",
        "the task's starting harness: the pretraining format, ask once, parse the first integer",
        "none (starting point)", "initial", initialHarnessSource());
  }

  @Override
  public HarnessCandidate initial(HarnessForm form) {
    if (form == HarnessForm.COMPLETION) {
      return initial();
    }
    MathGenome g = MathGenome.initial();
    g = new MathGenome(g.format(), g.decomposition(), g.votes(), g.retries(), g.parsing(),
        g.maxNewTokens(), form);
    return new HarnessCandidate("h0-" + g.code(), "the task's starting harness in the "
        + form.name().toLowerCase(java.util.Locale.ROOT) + " form (" + form.reason()
        + "), asked once, the first integer parsed", "none (starting point)", "initial", render(g));
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly) {
    // Prompt text is the FORMAT axis: the prefix and suffix literals around the question.
    return SEARCH.propose(archive, m, seed, promptOnly ? EnumSet.of(Axis.FORMAT) : axes);
  }

  @Override
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed, boolean promptOnly,
      boolean chatForm) {
    if (!chatForm || promptOnly) {
      return propose(archive, m, seed, promptOnly);
    }
    Set<Axis> withForm = EnumSet.copyOf(axes);
    withForm.add(Axis.FORM);
    return SEARCH.propose(archive, m, seed, withForm);
  }

  /**
   * Up to {@code m} new candidates (fewer only when every allowed genome is already archived),
   * deterministic for (archive, m, seed).
   */
  public List<HarnessCandidate> propose(ArchiveView archive, int m, long seed) {
    return SEARCH.propose(archive, m, seed, axes);
  }

  /** What the parent's traces say about the change {@code g -> n} on {@code axis}. */
  private static Judgement judge(Axis axis, MathGenome g, MathGenome n, TraceStats st) {
    double score = switch (axis) {
      case FORMAT, DECOMPOSITION -> 3;
      case VOTES, PARSING -> 2;
      case RETRIES, MAX_NEW_TOKENS, FORM -> 1;
    };
    String reason = defaultReason(axis, g, n);
    if (st.unparseableFraction() > 0.2) {
      if (axis == Axis.PARSING) {
        score += 4;
        reason = percent(st.unparseableFraction()) + " of answers were unparseable; "
            + n.parsing() + " parsing may recover answers that " + g.parsing() + " misses";
      } else if (axis == Axis.RETRIES && n.retries() > g.retries()) {
        score += 3;
        reason = percent(st.unparseableFraction()) + " of answers were unparseable; retrying unparseable"
            + " completions (" + n.retries() + "x) gives the model another chance";
      } else if (axis == Axis.FORMAT) {
        score += 2;
        reason = percent(st.unparseableFraction()) + " of answers were unparseable; the " + n.format()
            + " prompt format may make the model answer with a number";
      } else if (axis == Axis.MAX_NEW_TOKENS && n.maxNewTokens() > g.maxNewTokens()) {
        score += 1;
        reason = percent(st.unparseableFraction()) + " of answers were unparseable; completions may be cut off";
      }
    }
    if (st.turnBudgetFraction() > 0.05) {
      if ((axis == Axis.VOTES && n.votes() < g.votes()) || (axis == Axis.RETRIES && n.retries() < g.retries())) {
        score += 5;
        reason = percent(st.turnBudgetFraction()) + " of episodes hit the turn budget; fewer model calls"
            + " per step keeps them within it";
      } else if ((axis == Axis.VOTES && n.votes() > g.votes()) || (axis == Axis.RETRIES && n.retries() > g.retries())) {
        score -= 3;
      }
    }
    if (st.toolCallFraction() > 0.2 && axis == Axis.FORM && g.form() != HarnessForm.TOOLS
        && n.form() == HarnessForm.TOOLS) {
      score += 6;
      reason = percent(st.toolCallFraction()) + " of the model's completions are tool calls, which this"
          + " harness never runs; the TOOLS form offers the task's tools and runs the calls";
    }
    // An instruction-tuned model that mostly fails in one form: ask it the way it was tuned to be
    // asked (CHAT), and from CHAT offer the task's tools (TOOLS), before fine-tuning the prompt.
    if (axis == Axis.FORM && st.episodes() > 0 && st.successRate() < 0.25) {
      if (g.form() == HarnessForm.COMPLETION && n.form() == HarnessForm.CHAT) {
        score += 4;
        reason = "only " + percent(st.successRate()) + " of episodes succeeded with a completion "
            + "prompt; an instruction-tuned model answers a question put to it through its chat "
            + "template";
      } else if (g.form() == HarnessForm.CHAT && n.form() == HarnessForm.TOOLS) {
        score += 3;
        reason = "only " + percent(st.successRate()) + " of episodes succeeded through the chat "
            + "template; offering the task's tools lets the model hand the arithmetic to one";
      }
    }
    if (st.errorFraction() + st.timeoutFraction() > 0.2 && axis == Axis.DECOMPOSITION) {
      score += 2;
      reason = percent(st.errorFraction() + st.timeoutFraction()) + " of episodes failed; try "
          + n.decomposition() + " decomposition";
    }
    if (axis == Axis.FORMAT && g.form() != HarnessForm.COMPLETION) {
      score = 0; // a chat form sends no prefix or suffix: changing them changes nothing
    }
    return new Judgement(score, reason);
  }

  private static String defaultReason(Axis axis, MathGenome from, MathGenome to) {
    return switch (axis) {
      case FORMAT -> to.format() == MathGenome.PromptFormat.QA
          ? "the Q:/A: format is the one the model was pretrained on"
          : "the " + to.format() + " prompt format may suit the model better";
      case DECOMPOSITION -> to.decomposition() == Decomposition.CHAIN
          ? "the model answers one-step questions more reliably than multi-step ones; chaining one-step"
              + " questions (least-to-most) lets it do one operation at a time"
          : "direct answering needs one model call instead of one per step";
      case VOTES -> to.votes() > from.votes()
          ? "majority over " + to.votes() + " samples smooths out sampling errors at temperature 1"
          : "fewer samples per step (" + to.votes() + ") cut turns";
      case RETRIES -> to.retries() > from.retries()
          ? "retrying unparseable completions recovers answers"
          : "retries cost turns without helping";
      case PARSING -> to.parsing() + " parsing may match the model's completions better than " + from.parsing();
      case MAX_NEW_TOKENS -> to.maxNewTokens() < from.maxNewTokens()
          ? "answers are short; a tighter token limit stops rambling"
          : "a longer token limit avoids cutting answers off";
      case FORM -> to.form().reason();
    };
  }

  /**
   * The readable Java source of the harness {@code g}, with the genome embedded: the text blocks below,
   * read top to bottom, their {@code {{name}}} slots filled by {@link HarnessText#fill}.
   */
  public static String render(MathGenome g) {
    boolean chat = g.form() != HarnessForm.COMPLETION;
    String prompt = g.form() == HarnessForm.TOOLS
        ? "the question as the user's message, through the model's chat template, with the\n"
            + " * task's tools offered (a call runs and its result goes back; then the model answers)"
        : chat ? "the question as the user's message, through the model's chat template"
        : "\"" + g.format().prefixLiteral + "{question}" + g.format().suffixLiteral + "\"";
    return GenomeSpace.header(g.encode(), g.form().imports().toArray(String[]::new))
        + HarnessText.fill("""
          /**
           * Template harness {{code}}.
           * Prompt: {{prompt}}; {{decomposition}};
           * {{votes}} per question, {{retries}} retries on unparseable output, answer = {{parsing}}, \
          at most {{maxNewTokens}} new tokens per call.
           */
          public final class {{className}} implements Harness {
            public static final String GENOME = "{{genome}}";
            static final String PREFIX = "{{prefix}}";
            static final String SUFFIX = "{{suffix}}";
            static final int VOTES = {{votesCount}};
            static final int RETRIES = {{retries}};
            static final int MAX_NEW_TOKENS = {{maxNewTokens}};

            @Override
            public HarnessResult solve(Problem problem, HarnessContext ctx) {
          """,
            "code", g.code(),
            "prompt", prompt,
            "decomposition", g.decomposition() == Decomposition.CHAIN
                ? "least-to-most: one one-step question per operation, the model's answer fed into the next"
                : "direct: the whole question at once",
            "votes", g.votes() == 1 ? "one sample" : "majority of " + g.votes() + " samples",
            "retries", g.retries(),
            "parsing", switch (g.parsing()) {
              case FIRST_INT -> "first integer";
              case LAST_INT -> "last integer";
              case WHOLE_LINE -> "whole line";
            },
            "maxNewTokens", g.maxNewTokens(),
            "className", g.className(),
            "genome", g.encode(),
            "prefix", chat ? "" : g.format().prefixLiteral,
            "suffix", chat ? "" : g.format().suffixLiteral,
            "votesCount", g.votes())
        + (g.decomposition() == Decomposition.DIRECT ? """
                String answer = ask(ctx, problem.question());
                return HarnessResult.of(answer == null ? "" : answer);
            """ : """
                // The harness only rewrites text; the model does every arithmetic step.
                String[] sentences = ctx.tool("sentences", problem.question()).split("\\n");
                if (sentences.length < 3) {
                  String answer = ask(ctx, problem.question());
                  return HarnessResult.of(answer == null ? "" : answer);
                }
                String state = sentences[0];
                String question = sentences[sentences.length - 1];
                String value = "";
                for (int i = 1; i < sentences.length - 1; i++) {
                  value = ask(ctx, state + " " + sentences[i] + " " + question);
                  if (value == null) {
                    ctx.note("step " + i + ": no parseable answer");
                    return HarnessResult.of("");
                  }
                  ctx.note("step " + i + ": " + value);
                  state = replaceFirstNumber(state, value);
                }
                return HarnessResult.of(value);
            """)
        + """
            }

          """
        + (g.votes() == 1 ? """
              /** The parsed answer of one sample, or null. */
              private String ask(HarnessContext ctx, String question) {
                return sample(ctx, PREFIX + question + SUFFIX);
              }

            """ : """
              /** Majority over VOTES parsed samples (a tie goes to the first seen), or null. */
              private String ask(HarnessContext ctx, String question) {
                String prompt = PREFIX + question + SUFFIX;
                String[] answers = new String[VOTES];
                int n = 0;
                for (int v = 0; v < VOTES; v++) {
                  String a = sample(ctx, prompt);
                  if (a != null) {
                    answers[n++] = a;
                  }
                }
                String best = null;
                int bestCount = 0;
                for (int i = 0; i < n; i++) {
                  int count = 0;
                  for (int j = 0; j < n; j++) {
                    if (answers[j].equals(answers[i])) {
                      count++;
                    }
                  }
                  if (count > bestCount) {
                    best = answers[i];
                    bestCount = count;
                  }
                }
                return best;
              }

            """)
        + HarnessText.fill(g.retries() == 0 ? """
              /** One model call, parsed; null when unparseable or out of turns. */
              private String sample(HarnessContext ctx, String prompt) {
                if (ctx.turnsUsed() >= ctx.turnBudget()) {
                  return null;
                }
                return parse({{call}});
              }

            """ : """
              /** One parsed answer, retrying up to RETRIES times on unparseable output. */
              private String sample(HarnessContext ctx, String prompt) {
                for (int attempt = 0; attempt <= RETRIES; attempt++) {
                  if (ctx.turnsUsed() >= ctx.turnBudget()) {
                    return null;
                  }
                  String parsed = parse({{call}});
                  if (parsed != null) {
                    return parsed;
                  }
                }
                return null;
              }

            """, "call", g.form().call())
        + switch (g.parsing()) {
          case FIRST_INT -> """
                /** The first integer in the completion, or null. */
                static String parse(String completion) {
                  int i = 0;
                  while (i < completion.length() && !Character.isDigit(completion.charAt(i))) {
                    i++;
                  }
                  if (i == completion.length()) {
                    return null;
                  }
                  int j = i;
                  while (j < completion.length() && Character.isDigit(completion.charAt(j))) {
                    j++;
                  }
                  boolean negative = i > 0 && completion.charAt(i - 1) == '-';
                  return (negative ? "-" : "") + completion.substring(i, j);
                }
              """;
          case LAST_INT -> """
                /** The last integer in the completion, or null. */
                static String parse(String completion) {
                  int j = completion.length();
                  while (j > 0 && !Character.isDigit(completion.charAt(j - 1))) {
                    j--;
                  }
                  if (j == 0) {
                    return null;
                  }
                  int i = j;
                  while (i > 0 && Character.isDigit(completion.charAt(i - 1))) {
                    i--;
                  }
                  boolean negative = i > 0 && completion.charAt(i - 1) == '-';
                  return (negative ? "-" : "") + completion.substring(i, j);
                }
              """;
          case WHOLE_LINE -> """
                /** The whole first line, trimmed, without a final period; null when empty. */
                static String parse(String completion) {
                  String line = completion.trim();
                  if (line.endsWith(".")) {
                    line = line.substring(0, line.length() - 1).trim();
                  }
                  return line.isEmpty() ? null : line;
                }
              """;
        }
        + (g.decomposition() == Decomposition.CHAIN ? """

              /** Replaces the first number in the sentence with {@code value} (text rewriting only). */
              static String replaceFirstNumber(String sentence, String value) {
                int i = 0;
                while (i < sentence.length() && !Character.isDigit(sentence.charAt(i))) {
                  i++;
                }
                if (i == sentence.length()) {
                  return sentence;
                }
                int j = i;
                while (j < sentence.length() && Character.isDigit(sentence.charAt(j))) {
                  j++;
                }
                return sentence.substring(0, i) + value + sentence.substring(j);
              }
            """ : "")
        + "}\n";
  }
}
