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

class HarnessCompilerTest {
  static final HarnessCompiler COMPILER = new HarnessCompiler();

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
  static final class FixedContext implements HarnessContext {
    final List<String> notes = new ArrayList<>();
    int turns;

    public String generate(String prompt, int maxNewTokens) {
      turns++;
      return "7\n";
    }

    public String tool(String name, String input) {
      return name.equals("sentences") ? new whale.task.MathTask.SentencesTool().apply(input) : input.toUpperCase();
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
}
