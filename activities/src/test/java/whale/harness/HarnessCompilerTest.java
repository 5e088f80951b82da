package whale.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import whale.task.Problem;

public class HarnessCompilerTest {
  public static final HarnessCompiler COMPILER = new HarnessCompiler();

  static String harness(String imports, String body) {
    return "package whale.generated;\n"
        + "import whale.harness.*;\nimport whale.task.Problem;\n" + imports + "\n"
        + "public class H implements Harness {\n"
        + "  public HarnessResult solve(Problem problem, HarnessContext ctx) throws Exception {\n"
        + body + "\n"
        + "  }\n"
        + "}\n";
  }

  /** A context that answers every prompt with "7\n". */
  public static final class FixedContext implements HarnessContext {
    final List<String> notes = new ArrayList<>();
    public int turns;

    public String generate(String prompt, int maxNewTokens) {
      turns++;
      return "7\n";
    }

    @Override
    public whale.chat.AssistantTurn chat(List<whale.chat.Message> messages, whale.chat.ChatOptions options) {
      turns++;
      return whale.chat.ToolCalls.parse("7");
    }

    public String tool(String name, String input) {
      return name.equals("sentences") ? new whale.task.math.MathTask.SentencesTool().apply(input) : input.toUpperCase();
    }

    public int turnsUsed() {
      return turns;
    }

    public int turnBudget() {
      return 16;
    }

    public void note(String text) {
      notes.add(text);
    }
  }

  @Test
  void validSourceCompilesLoadsAndRuns() throws Exception {
    String src = harness("import java.util.*;\nimport java.util.regex.*;",
        "    List<String> parts = new ArrayList<>(Arrays.asList(problem.question().split(\" \")));\n"
            + "    Matcher m = Pattern.compile(\"\\\\d+\").matcher(ctx.generate(\"Q: \" + problem.question(), 4));\n"
            + "    String[] arr = problem.question().split(\" \");\n    int[] copy = new int[arr.length].clone();\n"
            + "    ctx.note(\"parts=\" + parts.size() + \" \" + Math.max(1, 2) + ctx.tool(\"x\", \"ab\"));\n"
            + "    return HarnessResult.of(m.find() ? m.group() : \"\");");
    CompiledHarness ch = COMPILER.compile(src);
    assertEquals("whale.generated.H", ch.className());
    Harness h = ch.newInstance();
    FixedContext ctx = new FixedContext();
    HarnessResult r = h.solve(new Problem("p", "a b c"), ctx);
    assertEquals("7", r.answer());
    assertEquals(List.of("parts=3 2AB"), ctx.notes);
    // loaded in its own loader, sees the host's API classes
    assertNotSame(getClass().getClassLoader(), ch.harnessClass().getClassLoader());
    assertSame(Harness.class, ch.harnessClass().getInterfaces()[0]);
    // two compilations are independent classes
    assertNotSame(ch.harnessClass(), COMPILER.compile(src).harnessClass());
  }

  @Test
  void defaultPackageAndHelpersAllowed() throws Exception {
    String src = "import whale.harness.*;\nimport whale.task.Problem;\n"
        + "/* public class NotThis */\n"
        + "public final class Other implements Harness {\n"
        + "  static final int N = 3;\n"
        + "  record Pair(String a, int b) {}\n"
        + "  public HarnessResult solve(Problem p, HarnessContext ctx) {\n"
        + "    try { Integer.parseInt(\"x\"); } catch (NumberFormatException e) { ctx.note(e.getMessage()); }\n"
        + "    java.util.function.Function<String, Integer> f = String::length;\n"
        + "    return new HarnessResult(String.valueOf(new Pair(\"a\", N).b() + f.apply(\"ab\")), java.util.List.of());\n"
        + "  }\n"
        + "}\n";
    CompiledHarness ch = COMPILER.compile(src);
    assertEquals("Other", ch.className());
    assertEquals("5", ch.newInstance().solve(new Problem("p", "q"), new FixedContext()).answer());
  }

  @Test
  void syntaxErrorReportsLine() {
    String src = harness("", "    int x = ;\n    return HarnessResult.of(\"1\");");
    HarnessCompilationException e = assertThrows(HarnessCompilationException.class, () -> COMPILER.compile(src));
    assertFalse(e.diagnostics().isEmpty());
    assertEquals(7, e.diagnostics().get(0).line(), e.getMessage());
    assertTrue(e.getMessage().startsWith("line 7:"), e.getMessage());
  }

  @Test
  void typeErrorReportsLine() {
    HarnessCompiler.Result r = COMPILER.tryCompile(harness("", "    return HarnessResult.of(42);"));
    assertFalse(r.ok());
    assertEquals(7, r.diagnostics().get(0).line(), r.errorText());
  }

  @Test
  void missingInterfaceRejected() {
    String src = "package whale.generated;\npublic class H {\n  public String solve() { return \"1\"; }\n}\n";
    HarnessCompiler.Result r = COMPILER.tryCompile(src);
    assertFalse(r.ok());
    assertTrue(r.errorText().contains("does not implement whale.harness.Harness"), r.errorText());
    assertEquals(2, r.diagnostics().get(0).line());
  }

  @Test
  void noPublicClassOrPrivateConstructorRejected() {
    assertFalse(COMPILER.tryCompile("class H {}").ok());
    assertFalse(COMPILER.tryCompile("").ok());
    String src = harness("", "    return HarnessResult.of(\"1\");").replace("public class H implements Harness {",
        "public class H implements Harness {\n  private H() {}");
    HarnessCompiler.Result r = COMPILER.tryCompile(src);
    assertFalse(r.ok());
    assertTrue(r.errorText().contains("no-argument constructor"), r.errorText());
  }

  @Test
  void reservedPackageRejected() {
    String src = harness("", "    return HarnessResult.of(\"1\");").replace("package whale.generated;", "package whale.harness;");
    HarnessCompiler.Result r = COMPILER.tryCompile(src);
    assertFalse(r.ok());
    assertTrue(r.errorText().contains("reserved"), r.errorText());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "System.exit|    System.exit(1);|java.lang.System",
      "System.out|    System.out.println(1);|java.lang.System",
      "Runtime|    Runtime.getRuntime().halt(0);|java.lang.Runtime",
      "new File|    new java.io.File(\"x\").delete();|java.io.File",
      "Files|    java.nio.file.Files.readString(java.nio.file.Path.of(\"/etc/passwd\"));|java.nio.file.Files",
      "Thread|    new Thread(() -> {}).start();|java.lang.Thread",
      "Thread.sleep|    Thread.sleep(10);|java.lang.Thread",
      "Class.forName|    Class.forName(\"java.lang.System\");|java.lang.Class",
      "getClass|    problem.getClass().getClassLoader();|getClass",
      "class literal|    Object o = String.class;|class literals",
      "Method|    java.lang.reflect.Method m = null;|java.lang.reflect.Method",
      "Socket|    new java.net.Socket(\"localhost\", 80);|java.net.Socket",
      "ProcessBuilder|    new ProcessBuilder(\"ls\").start();|java.lang.ProcessBuilder",
      "ClassLoader|    ClassLoader.getSystemClassLoader();|java.lang.ClassLoader",
      "Executors|    java.util.concurrent.Executors.newFixedThreadPool(2);|java.util.concurrent.Executors",
      "Integer.getInteger|    Integer.getInteger(\"x\");|java.lang.Integer.getInteger",
      "parallelStream|    java.util.List.of(1).parallelStream().count();|parallel",
      "catch Throwable|    try { ctx.note(\"\"); } catch (Throwable t) { }|java.lang.Throwable",
      "ServiceLoader|    java.util.ServiceLoader.load(Runnable.class);|java.util.ServiceLoader",
      "other whale class|    new whale.harness.HarnessCompiler();|whale.harness.HarnessCompiler",
      "model class|    whale.model.SamplingParams p = null;|whale.model.SamplingParams",
  })
  void forbiddenUseRejected(String label, String statement, String expected) {
    String src = harness("", statement + "\n    return HarnessResult.of(\"1\");");
    HarnessCompiler.Result r = COMPILER.tryCompile(src);
    assertFalse(r.ok(), label + " should be rejected");
    assertTrue(r.errorText().contains(expected), label + ": " + r.errorText());
    assertEquals(7, r.diagnostics().get(0).line(), r.errorText());
  }

  @Test
  void forbiddenImportRejected() {
    HarnessCompiler.Result r = COMPILER.tryCompile(harness("import java.io.File;", "    return HarnessResult.of(\"1\");"));
    assertFalse(r.ok());
    assertTrue(r.errorText().contains("java.io.File"), r.errorText());
    HarnessCompiler.Result s = COMPILER.tryCompile(
        harness("import static java.lang.System.exit;", "    exit(0);\n    return HarnessResult.of(\"1\");"));
    assertFalse(s.ok());
    assertTrue(s.errorText().contains("java.lang.System"), s.errorText());
  }

  @Test
  void mutableStaticFieldRejected() {
    String src = harness("", "    return HarnessResult.of(\"1\");").replace("public class H implements Harness {",
        "public class H implements Harness {\n  static int counter;");
    HarnessCompiler.Result r = COMPILER.tryCompile(src);
    assertFalse(r.ok());
    assertTrue(r.errorText().contains("must be final"), r.errorText());
  }

  static String withMembers(String members, String body) {
    return harness("import java.util.*;\nimport java.util.function.*;\nimport java.util.regex.*;",
        body + "\n    return HarnessResult.of(\"1\");")
        .replace("public class H implements Harness {", "public class H implements Harness {\n" + members);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "static final array|  static final int[] COUNT = new int[1];|static field 'COUNT' of type int[]",
      "static final array of strings|  static final String[] NAMES = {\"a\"};|static field 'NAMES'",
      "static final ArrayList|  static final List<String> SEEN = new ArrayList<>();|static field 'SEEN'",
      "static final List.of of arrays|  static final List<int[]> L = List.of(new int[1]);|static field 'L'",
      "static final StringBuilder|  static final StringBuilder SB = new StringBuilder();|static field 'SB'",
      "static final own class|  static final Box B = new Box(); static final class Box { int n; }|static field 'B'",
      "static final anonymous Function|  static final Function<String, String> F = new Function<>() { int n; public String apply(String s) { return s + n++; } };|static field 'F'",
      "static final Object|  static final Object O = new Object();|static field 'O'",
      "record holding an array|  record R(int[] a) {} static final R R0 = new R(new int[1]);|static field 'R0'",
      "enum with mutable field|  enum Counter { INSTANCE; int count; }|enum field 'count' must be final",
      "enum with final array|  enum Counter { INSTANCE; final int[] count = new int[1]; }|enum field 'count'",
      "interface constant array|  interface K { int[] A = {1}; }|static field 'A'",
      "finalize override|  protected void finalize() { while (true) { } }|finalize() may not be overridden",
  })
  void mutableSharedStateAndFinalizersRejected(String label, String members, String expected) {
    HarnessCompiler.Result r = COMPILER.tryCompile(withMembers(members, ""));
    assertFalse(r.ok(), label + " should be rejected");
    assertTrue(r.errorText().contains(expected), label + ": " + r.errorText());
    assertEquals(8, r.diagnostics().get(0).line(), r.errorText());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "StreamSupport|    java.util.stream.StreamSupport.stream(List.of(1).spliterator(), true).count();|java.util.stream.StreamSupport",
      "Arrays.parallelSort|    Arrays.parallelSort(new int[3]);|parallel execution",
      "Stream.parallel|    java.util.stream.IntStream.range(0, 9).parallel().sum();|parallel execution",
      "Locale.setDefault|    Locale.setDefault(Locale.FRANCE);|java.util.Locale.setDefault",
      "String.intern|    ctx.note(String.valueOf(new String(\"a\").intern() == \"a\"));|java.lang.String.intern",
      "TimeZone.setDefault|    TimeZone.setDefault(TimeZone.getTimeZone(\"Asia/Tokyo\"));|java.util.TimeZone.setDefault",
      "return in finally|    try { ctx.note(\"x\"); } finally { if (problem.id().isEmpty()) return HarnessResult.of(\"2\"); }|'return' may not leave a finally block",
      "throw in finally|    try { ctx.note(\"x\"); } finally { if (problem.id().isEmpty()) throw new IllegalStateException(); }|'throw' may not leave a finally block",
      "break out of finally|    for (int i = 0; i < 3; i++) { try { ctx.note(\"x\"); } finally { break; } }|'break' may not leave",
      "continue out of finally|    for (int i = 0; i < 3; i++) { try { ctx.note(\"x\"); } finally { continue; } }|'continue' may not leave",
      "labeled break out of finally|    out: for (int i = 0; i < 3; i++) { try { ctx.note(\"x\"); } finally { for (;;) { break out; } } }|'break' may not leave",
  })
  void parallelismGlobalDefaultsAndAbruptFinallyRejected(String label, String statement, String expected) {
    HarnessCompiler.Result r = COMPILER.tryCompile(withMembers("", statement));
    assertFalse(r.ok(), label + " should be rejected");
    assertTrue(r.errorText().contains(expected), label + ": " + r.errorText());
    assertEquals(10, r.diagnostics().get(0).line(), r.errorText());
  }

  @Test
  void immutableStaticStateAndOrdinaryFinallyBlocksCompile() throws Exception {
    String src = withMembers("""
          static final int N = 3;
          static final String S = "s";
          static final Pattern P = Pattern.compile("\\\\d+");
          static final Set<String> WORDS = Set.of("a", "b");
          static final Map<String, Integer> M = Map.of("a", 1);
          static final List<Integer> L = List.copyOf(List.of(1, 2));
          static final Function<String, Integer> LEN = String::length;
          static final UnaryOperator<String> TRIM = s -> s.trim();
          record Pair(String a, int b) {}
          static final Pair PAIR = new Pair("a", 1);
          enum Mode { A("a"), B("b"); final String tag; Mode(String tag) { this.tag = tag; } }
          static final Mode DEFAULT = Mode.A;
        """, """
            int sum = 0;
            try {
              sum += N;
            } finally {
              for (int i = 0; i < 3; i++) { if (i == 1) { break; } else { continue; } }
              inner: while (true) { break inner; }
              switch (sum) { case 3: sum++; break; default: break; }
              Supplier<String> s = () -> { return "ok"; };
              ctx.note(s.get() + sum + PAIR.b() + DEFAULT.tag + WORDS.size() + LEN.apply(TRIM.apply(" x ")));
            }""");
    HarnessCompiler.Result r = COMPILER.tryCompile(src);
    assertTrue(r.ok(), r.errorText());
    FixedContext ctx = new FixedContext();
    r.harness().newInstance().solve(new Problem("p", "q"), ctx);
    assertEquals(List.of("ok41a21"), ctx.notes);
  }

  @Test
  void everyInstanceComesFromAFreshClassLoader() throws Exception {
    CompiledHarness ch = COMPILER.compile(harness("", "    return HarnessResult.of(\"1\");"));
    Harness a = ch.newInstance();
    Harness b = ch.newInstance();
    // a static field, however it got past the checks, belongs to one episode's class only
    assertNotSame(a.getClass(), b.getClass());
    assertNotSame(a.getClass().getClassLoader(), b.getClass().getClassLoader());
    assertNotSame(ch.harnessClass(), a.getClass());
    assertEquals("whale-harness", a.getClass().getClassLoader().getName());
    assertEquals(ch.className(), b.getClass().getName());
  }

  static String withLiteral(int chars) {
    return harness("", "    String prompt = \"" + "a".repeat(chars) + "\";\n    return HarnessResult.of(prompt.substring(0, 1));");
  }

  @Test
  void longStringLiteralsAreScannedInLinearTime() throws Exception {
    // an honest chat harness with a long system prompt (the old regex scan overflowed at ~1,800)
    HarnessCompiler.Result ok = COMPILER.tryCompile(withLiteral(30_000));
    assertTrue(ok.ok(), ok.errorText());
    assertEquals("a", ok.harness().newInstance().solve(new Problem("p", "q"), new FixedContext()).answer());
    // the header scan of a 100k-character literal, then javac's own limit on one constant
    long t0 = System.nanoTime();
    HarnessCompiler.Result big = COMPILER.tryCompile(withLiteral(100_000));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertFalse(big.ok());
    assertTrue(big.errorText().contains("constant string too long"), big.errorText());
    assertEquals(7, big.diagnostics().get(0).line(), big.errorText());
    assertTrue(ms < 20_000, ms + " ms");
    SourceHeader h = SourceHeader.scan("package a.b;\n/* public class X */ // public class Y\nclass Q { String s = \""
        + "\\\"public class Z ".repeat(100_000) + "\"; char c = '\"'; String t = \"\"\"\n public class T\n \"\"\"; }\n"
        + "public final class Real implements Harness {}");
    assertEquals(new SourceHeader("a.b", 1, "Real"), h);
  }

  @Test
  void oversizedSourceRejected() {
    HarnessCompiler.Result r = COMPILER.tryCompile(withLiteral(HarnessCompiler.MAX_SOURCE_CHARS));
    assertFalse(r.ok());
    assertTrue(r.errorText().contains("over the limit of " + HarnessCompiler.MAX_SOURCE_CHARS), r.errorText());
  }
}
