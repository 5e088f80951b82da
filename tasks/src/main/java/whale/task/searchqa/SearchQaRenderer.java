package whale.task.searchqa;

import java.util.ArrayList;
import java.util.List;
import whale.harness.GenomeSpace;
import whale.harness.HarnessText;
import whale.task.searchqa.SearchQaGenome.Hops;
import whale.task.searchqa.SearchQaGenome.Parsing;

/**
 * Writes the readable Java source of a search-QA template harness, its genome embedded. The harness
 * is the text blocks below, read top to bottom; {@code {{name}}} slots are filled by
 * {@link HarnessText#fill}, and the pieces that depend on the genome are chosen in plain Java.
 */
public final class SearchQaRenderer {
  private SearchQaRenderer() {}

  public static String render(SearchQaGenome g) {
    List<String> imports = new ArrayList<>(List.of("java.util.ArrayList", "java.util.List",
        "java.util.Locale", "java.util.Set"));
    imports.addAll(g.form().imports());
    return GenomeSpace.header(g.encode(), imports.toArray(String[]::new))
        + HarnessText.fill("""
          /**
           * Template search-QA harness {{code}}: query = {{query}}, {{docs}} document(s) of at most {{chars}} characters,
           * labels "{{doc}}" / "{{question}}" / "{{answer}}", {{hops}},
           * {{votes}} per question, answer = {{parsing}}, at most {{maxNewTokens}} new tokens per call.
           * The model writes every answer; the harness only searches and formats.
           */
          public final class {{className}} implements Harness {
            public static final String GENOME = "{{genome}}";
            static final String DOC = "{{doc}}";
            static final String QUESTION = "{{question}}";
            static final String ANSWER = "{{answer}}";
            static final int DOCS = {{docs}};
            static final int CHARS = {{chars}};
            static final int VOTES = {{votesCount}};
            static final int MAX_NEW_TOKENS = {{maxNewTokens}};
            static final Set<String> QUESTION_WORDS = Set.of("who", "whom", "whose", "what", "which", "where", \
          "when", "why", "how", "is", "was", "are", "were", "do", "does", "did", "the", "a", "an", "of", "in", \
          "on", "to");

            @Override
            public HarnessResult solve(Problem problem, HarnessContext ctx) {
              String question = problem.question();
              List<String> found = search(ctx, query(question));
          """,
            "code", g.code(),
            "query", g.query().name().toLowerCase(),
            "docs", g.docs(),
            "chars", g.chars(),
            "doc", g.format().docLiteral,
            "question", g.format().questionLiteral,
            "answer", g.format().answerLiteral,
            "hops", g.hops() == Hops.TWO ? "two hops (the model names the bridge entity, which is searched for)"
                : "one hop",
            "votes", g.votes() == 1 ? "one sample" : "majority of " + g.votes() + " samples",
            "votesCount", g.votes(),
            "parsing", g.parsing() == Parsing.LINE ? "whole line" : "first clause",
            "maxNewTokens", g.maxNewTokens(),
            "className", g.className(),
            "genome", g.encode())
        + (g.hops() == Hops.ONE ? """
                String answer = ask(ctx, first(found, DOCS), question);
            """ : """
                // hop 1: the model names the entity the question hinges on
                String bridge = ask(ctx, first(found, DOCS), question);
                if (bridge == null) {
                  return HarnessResult.of("");
                }
                ctx.note("bridge: " + bridge);
                // hop 2: its documents first, interleaved with the first search's
                List<String> second = search(ctx, bridge);
                List<String> docs = new ArrayList<>();
                for (int i = 0; i < Math.max(second.size(), found.size()); i++) {
                  if (i < second.size() && docs.size() < DOCS && !docs.contains(second.get(i))) {
                    docs.add(second.get(i));
                  }
                  if (i < found.size() && docs.size() < DOCS && !docs.contains(found.get(i))) {
                    docs.add(found.get(i));
                  }
                }
                String answer = ask(ctx, docs, question);
            """)
        + """
              return HarnessResult.of(answer == null ? "" : answer);
            }

            /** The search query written from the question. */
            static String query(String question) {
          """
        + switch (g.query()) {
          case RAW -> """
                  return question;
              """;
          case KEYWORDS -> """
                  List<String> words = new ArrayList<>();
                  for (String w : question.replace("?", " ").split("\\\\s+")) {
                    if (!w.isEmpty() && !QUESTION_WORDS.contains(w.toLowerCase(Locale.ROOT))) {
                      words.add(w);
                    }
                  }
                  return words.isEmpty() ? question : String.join(" ", words);
              """;
          case ENTITY -> """
                  List<String> names = new ArrayList<>();
                  String[] words = question.replaceAll("[?.,;:!]", " ").trim().split("\\\\s+");
                  for (int i = 1; i < words.length; i++) {
                    if (!words[i].isEmpty() && Character.isUpperCase(words[i].charAt(0))) {
                      names.add(words[i]);
                    }
                  }
                  return names.isEmpty() ? question : String.join(" ", names);
              """;
        }
        + """
            }

            /** The search tool's documents, best first. */
            static List<String> search(HarnessContext ctx, String query) {
              List<String> out = new ArrayList<>();
              for (String line : ctx.tool("search", query).split("\\n")) {
                if (!line.isBlank()) {
                  out.add(line.trim());
                }
              }
              return out;
            }

            static List<String> first(List<String> docs, int n) {
              return new ArrayList<>(docs.subList(0, Math.min(n, docs.size())));
            }

            static String prompt(List<String> docs, String question) {
              StringBuilder p = new StringBuilder();
              for (String d : docs) {
                p.append(DOC).append(d.length() > CHARS ? d.substring(0, CHARS) : d).append('\\n');
              }
              return p.append(QUESTION).append(question).append('\\n').append(ANSWER).toString();
            }

          """
        + (g.votes() == 1 ? """
              /** The parsed answer of one sample, or null. */
              private String ask(HarnessContext ctx, List<String> docs, String question) {
                return sample(ctx, prompt(docs, question));
              }

            """ : """
              /** The most frequent parsed answer of VOTES samples (ties: the first seen), or null. */
              private String ask(HarnessContext ctx, List<String> docs, String question) {
                String prompt = prompt(docs, question);
                List<String> answers = new ArrayList<>();
                for (int v = 0; v < VOTES; v++) {
                  String a = sample(ctx, prompt);
                  if (a != null) {
                    answers.add(a);
                  }
                }
                String best = null;
                int bestCount = 0;
                for (String a : answers) {
                  int count = 0;
                  for (String b : answers) {
                    if (a.equalsIgnoreCase(b)) {
                      count++;
                    }
                  }
                  if (count > bestCount) {
                    best = a;
                    bestCount = count;
                  }
                }
                return best;
              }

            """)
        + HarnessText.fill("""
            /** One model call, parsed; null when blank or out of turns. */
            private String sample(HarnessContext ctx, String prompt) {
              if (ctx.turnsUsed() >= ctx.turnBudget()) {
                return null;
              }
              return parse({{call}});
            }

          """, "call", g.form().call())
        + (g.parsing() == Parsing.LINE ? """
              /** The first line, trimmed, without a final period; null when empty. */
              static String parse(String completion) {
                String line = completion.split("\\n", -1)[0].trim();
                if (line.endsWith(".")) {
                  line = line.substring(0, line.length() - 1).trim();
                }
                return line.isEmpty() ? null : line;
              }
            """ : """
              /** Up to the first '.', ',' or ';', at most four words; null when empty. */
              static String parse(String completion) {
                String line = completion.split("\\n", -1)[0];
                int end = line.length();
                for (char c : new char[] {'.', ',', ';'}) {
                  int i = line.indexOf(c);
                  if (i >= 0 && i < end) {
                    end = i;
                  }
                }
                String[] words = line.substring(0, end).trim().split("\\\\s+");
                String out = String.join(" ", java.util.Arrays.copyOf(words, Math.min(4, words.length)));
                return out.isBlank() ? null : out.trim();
              }
            """)
        + "}\n";
  }
}
