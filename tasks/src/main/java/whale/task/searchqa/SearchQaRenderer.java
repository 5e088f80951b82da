package whale.task.searchqa;

import whale.harness.GenomeSpace;
import whale.task.searchqa.SearchQaGenome.Hops;

/** Writes the readable Java source of a search-QA template harness, its genome embedded. */
public final class SearchQaRenderer {
  private SearchQaRenderer() {}

  public static String render(SearchQaGenome g) {
    java.util.List<String> imports = new java.util.ArrayList<>(java.util.List.of("java.util.ArrayList",
        "java.util.List", "java.util.Locale", "java.util.Set"));
    imports.addAll(g.form().imports());
    StringBuilder s = new StringBuilder(GenomeSpace.header(g.encode(), imports.toArray(String[]::new)));
    s.append("/**\n");
    s.append(" * Template search-QA harness ").append(g.code()).append(": query = ")
        .append(g.query().name().toLowerCase()).append(", ").append(g.docs()).append(" document(s) of at most ")
        .append(g.chars()).append(" characters,\n");
    s.append(" * labels \"").append(g.format().docLiteral).append("\" / \"").append(g.format().questionLiteral)
        .append("\" / \"").append(g.format().answerLiteral).append("\", ")
        .append(g.hops() == Hops.TWO ? "two hops (the model names the bridge entity, which is searched for)"
            : "one hop").append(",\n");
    s.append(" * ").append(g.votes() == 1 ? "one sample" : "majority of " + g.votes() + " samples")
        .append(" per question, answer = ").append(g.parsing() == SearchQaGenome.Parsing.LINE ? "whole line"
            : "first clause").append(", at most ").append(g.maxNewTokens()).append(" new tokens per call.\n");
    s.append(" * The model writes every answer; the harness only searches and formats.\n");
    s.append(" */\n");
    s.append("public final class ").append(g.className()).append(" implements Harness {\n");
    s.append("  public static final String GENOME = \"").append(g.encode()).append("\";\n");
    s.append("  static final String DOC = \"").append(g.format().docLiteral).append("\";\n");
    s.append("  static final String QUESTION = \"").append(g.format().questionLiteral).append("\";\n");
    s.append("  static final String ANSWER = \"").append(g.format().answerLiteral).append("\";\n");
    s.append("  static final int DOCS = ").append(g.docs()).append(";\n");
    s.append("  static final int CHARS = ").append(g.chars()).append(";\n");
    s.append("  static final int VOTES = ").append(g.votes()).append(";\n");
    s.append("  static final int MAX_NEW_TOKENS = ").append(g.maxNewTokens()).append(";\n");
    s.append("  static final Set<String> QUESTION_WORDS = Set.of(\"who\", \"whom\", \"whose\", \"what\", "
        + "\"which\", \"where\", \"when\", \"why\", \"how\", \"is\", \"was\", \"are\", \"were\", \"do\", "
        + "\"does\", \"did\", \"the\", \"a\", \"an\", \"of\", \"in\", \"on\", \"to\");\n\n");

    s.append("  @Override\n");
    s.append("  public HarnessResult solve(Problem problem, HarnessContext ctx) {\n");
    s.append("    String question = problem.question();\n");
    s.append("    List<String> found = search(ctx, query(question));\n");
    if (g.hops() == Hops.ONE) {
      s.append("    String answer = ask(ctx, first(found, DOCS), question);\n");
    } else {
      s.append("    // hop 1: the model names the entity the question hinges on\n");
      s.append("    String bridge = ask(ctx, first(found, DOCS), question);\n");
      s.append("    if (bridge == null) {\n");
      s.append("      return HarnessResult.of(\"\");\n");
      s.append("    }\n");
      s.append("    ctx.note(\"bridge: \" + bridge);\n");
      s.append("    // hop 2: its documents first, interleaved with the first search's\n");
      s.append("    List<String> second = search(ctx, bridge);\n");
      s.append("    List<String> docs = new ArrayList<>();\n");
      s.append("    for (int i = 0; i < Math.max(second.size(), found.size()); i++) {\n");
      s.append("      if (i < second.size() && docs.size() < DOCS && !docs.contains(second.get(i))) {\n");
      s.append("        docs.add(second.get(i));\n");
      s.append("      }\n");
      s.append("      if (i < found.size() && docs.size() < DOCS && !docs.contains(found.get(i))) {\n");
      s.append("        docs.add(found.get(i));\n");
      s.append("      }\n");
      s.append("    }\n");
      s.append("    String answer = ask(ctx, docs, question);\n");
    }
    s.append("    return HarnessResult.of(answer == null ? \"\" : answer);\n");
    s.append("  }\n\n");

    s.append("  /** The search query written from the question. */\n");
    s.append("  static String query(String question) {\n");
    switch (g.query()) {
      case RAW -> s.append("    return question;\n");
      case KEYWORDS -> {
        s.append("    List<String> words = new ArrayList<>();\n");
        s.append("    for (String w : question.replace(\"?\", \" \").split(\"\\\\s+\")) {\n");
        s.append("      if (!w.isEmpty() && !QUESTION_WORDS.contains(w.toLowerCase(Locale.ROOT))) {\n");
        s.append("        words.add(w);\n");
        s.append("      }\n");
        s.append("    }\n");
        s.append("    return words.isEmpty() ? question : String.join(\" \", words);\n");
      }
      case ENTITY -> {
        s.append("    List<String> names = new ArrayList<>();\n");
        s.append("    String[] words = question.replaceAll(\"[?.,;:!]\", \" \").trim().split(\"\\\\s+\");\n");
        s.append("    for (int i = 1; i < words.length; i++) {\n");
        s.append("      if (!words[i].isEmpty() && Character.isUpperCase(words[i].charAt(0))) {\n");
        s.append("        names.add(words[i]);\n");
        s.append("      }\n");
        s.append("    }\n");
        s.append("    return names.isEmpty() ? question : String.join(\" \", names);\n");
      }
      default -> throw new IllegalStateException();
    }
    s.append("  }\n\n");

    s.append("  /** The search tool's documents, best first. */\n");
    s.append("  static List<String> search(HarnessContext ctx, String query) {\n");
    s.append("    List<String> out = new ArrayList<>();\n");
    s.append("    for (String line : ctx.tool(\"search\", query).split(\"\\n\")) {\n");
    s.append("      if (!line.isBlank()) {\n");
    s.append("        out.add(line.trim());\n");
    s.append("      }\n");
    s.append("    }\n");
    s.append("    return out;\n");
    s.append("  }\n\n");

    s.append("  static List<String> first(List<String> docs, int n) {\n");
    s.append("    return new ArrayList<>(docs.subList(0, Math.min(n, docs.size())));\n");
    s.append("  }\n\n");

    s.append("  static String prompt(List<String> docs, String question) {\n");
    s.append("    StringBuilder p = new StringBuilder();\n");
    s.append("    for (String d : docs) {\n");
    s.append("      p.append(DOC).append(d.length() > CHARS ? d.substring(0, CHARS) : d).append('\\n');\n");
    s.append("    }\n");
    s.append("    return p.append(QUESTION).append(question).append('\\n').append(ANSWER).toString();\n");
    s.append("  }\n\n");

    if (g.votes() == 1) {
      s.append("  /** The parsed answer of one sample, or null. */\n");
      s.append("  private String ask(HarnessContext ctx, List<String> docs, String question) {\n");
      s.append("    return sample(ctx, prompt(docs, question));\n");
      s.append("  }\n\n");
    } else {
      s.append("  /** The most frequent parsed answer of VOTES samples (ties: the first seen), or null. */\n");
      s.append("  private String ask(HarnessContext ctx, List<String> docs, String question) {\n");
      s.append("    String prompt = prompt(docs, question);\n");
      s.append("    List<String> answers = new ArrayList<>();\n");
      s.append("    for (int v = 0; v < VOTES; v++) {\n");
      s.append("      String a = sample(ctx, prompt);\n");
      s.append("      if (a != null) {\n");
      s.append("        answers.add(a);\n");
      s.append("      }\n");
      s.append("    }\n");
      s.append("    String best = null;\n");
      s.append("    int bestCount = 0;\n");
      s.append("    for (String a : answers) {\n");
      s.append("      int count = 0;\n");
      s.append("      for (String b : answers) {\n");
      s.append("        if (a.equalsIgnoreCase(b)) {\n");
      s.append("          count++;\n");
      s.append("        }\n");
      s.append("      }\n");
      s.append("      if (count > bestCount) {\n");
      s.append("        best = a;\n");
      s.append("        bestCount = count;\n");
      s.append("      }\n");
      s.append("    }\n");
      s.append("    return best;\n");
      s.append("  }\n\n");
    }

    s.append("  /** One model call, parsed; null when blank or out of turns. */\n");
    s.append("  private String sample(HarnessContext ctx, String prompt) {\n");
    s.append("    if (ctx.turnsUsed() >= ctx.turnBudget()) {\n");
    s.append("      return null;\n");
    s.append("    }\n");
    s.append("    return parse(").append(g.form().call()).append(");\n");
    s.append("  }\n\n");

    if (g.parsing() == SearchQaGenome.Parsing.LINE) {
      s.append("  /** The first line, trimmed, without a final period; null when empty. */\n");
      s.append("  static String parse(String completion) {\n");
      s.append("    String line = completion.split(\"\\n\", -1)[0].trim();\n");
      s.append("    if (line.endsWith(\".\")) {\n");
      s.append("      line = line.substring(0, line.length() - 1).trim();\n");
      s.append("    }\n");
      s.append("    return line.isEmpty() ? null : line;\n");
      s.append("  }\n");
    } else {
      s.append("  /** Up to the first '.', ',' or ';', at most four words; null when empty. */\n");
      s.append("  static String parse(String completion) {\n");
      s.append("    String line = completion.split(\"\\n\", -1)[0];\n");
      s.append("    int end = line.length();\n");
      s.append("    for (char c : new char[] {'.', ',', ';'}) {\n");
      s.append("      int i = line.indexOf(c);\n");
      s.append("      if (i >= 0 && i < end) {\n");
      s.append("        end = i;\n");
      s.append("      }\n");
      s.append("    }\n");
      s.append("    String[] words = line.substring(0, end).trim().split(\"\\\\s+\");\n");
      s.append("    String out = String.join(\" \", java.util.Arrays.copyOf(words, Math.min(4, words.length)));\n");
      s.append("    return out.isBlank() ? null : out.trim();\n");
      s.append("  }\n");
    }
    s.append("}\n");
    return s.toString();
  }
}
