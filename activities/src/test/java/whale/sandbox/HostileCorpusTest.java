package whale.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.EpisodeStatus;
import whale.harness.HarnessCompiler;
import whale.task.math.MathTemplates;
import whale.model.LanguageModel;
import whale.model.ModelConfig;
import whale.task.math.MathTask;
import whale.task.Split;
import whale.task.TaskProblem;

/**
 * Hostile harness candidates: each is rejected at compile time or contained at run time by the
 * sandbox; this (worker) JVM survives and a run after them still works. A tiny real model.
 */
@Timeout(300)
class HostileCorpusTest {
  static final MathTask TASK = new MathTask(1, 4, 4, 4);
  static SandboxExecutor sandbox;
  static LanguageModel model;

  static String harness(String name, String body) {
    return "import whale.harness.*;\nimport whale.task.Problem;\nimport java.util.*;\n"
        + "public class " + name + " implements Harness {\n"
        + "  public HarnessResult solve(Problem p, HarnessContext ctx) throws Exception {\n" + body + "\n  }\n"
        + "  static int down(int n) { return down(n + 1) + 1; }\n"
        + "}\n";
  }

  static String harnessWith(String name, String members, String body) {
    return harness(name, body).replace("public class " + name + " implements Harness {\n",
        "public class " + name + " implements Harness {\n" + members + "\n");
  }

  /**
   * Issue 14: work that outlives its episode, state shared between episodes, global defaults, Errors
   * swallowed by finally, unbounded compilation. Rejected with a diagnostic that names the reason (in
   * this JVM and by the sandbox check the worker uses).
   */
  static final Map<String, String[]> REJECTED_WITH_REASON = new LinkedHashMap<>();

  static void reject(String key, String source, String reason) {
    REJECTED_WITH_REASON.put(key, new String[] {source, reason});
  }

  static {
    reject("streamSupportParallel", harness("SpinPool", "java.util.stream.StreamSupport.stream("
        + "List.of(1, 2, 3).spliterator(), true).forEach(x -> { while (true) { } }); return HarnessResult.of(\"1\");"),
        "forbidden: java.util.stream.StreamSupport");
    reject("parallelSetAll", harness("SetAll", "long[] a = new long[8];"
        + " Arrays.parallelSetAll(a, i -> { while (true) { } }); return HarnessResult.of(\"1\");"),
        "parallel execution is not allowed");
    reject("parallelStreamOfRange", harness("Range", "return HarnessResult.of(\"\" + java.util.stream.IntStream"
        + ".range(0, 1 << 30).parallel().map(i -> i % 7).sum());"), "parallel execution is not allowed");
    reject("finalizerLoop", harnessWith("Fin", "  protected void finalize() { while (true) { } }",
        "return HarnessResult.of(\"1\");"), "finalize() may not be overridden");
    reject("finalizerInAnonymousClass", harness("FinAnon", "Object o = new Object() { protected void finalize() {"
        + " while (true) { } } }; o = null; return HarnessResult.of(\"1\");"), "finalize() may not be overridden");
    reject("staticArrayCounter", harnessWith("Count", "  static final int[] COUNT = new int[1];",
        "COUNT[0]++; return HarnessResult.of(\"count=\" + COUNT[0]);"), "static field 'COUNT' of type int[]");
    reject("enumSingletonCounter", harnessWith("EnumCount", "  enum Counter { INSTANCE; int count; }",
        "Counter.INSTANCE.count++; return HarnessResult.of(\"count=\" + Counter.INSTANCE.count);"),
        "enum field 'count' must be final");
    reject("enumWithFinalMutableField", harnessWith("EnumList", "  enum Memo { ONE; final List<String> seen ="
        + " new ArrayList<>(); }", "Memo.ONE.seen.add(p.id()); return HarnessResult.of(\"\" + Memo.ONE.seen.size());"),
        "enum field 'seen'");
    reject("staticCacheMap", harnessWith("Cache", "  static final Map<String, Integer> SEEN = new HashMap<>();",
        "SEEN.merge(\"n\", 1, Integer::sum); return HarnessResult.of(\"\" + SEEN.get(\"n\"));"),
        "static field 'SEEN'");
    reject("recordHoldingArray", harnessWith("Rec2", "  record Box(int[] v) {}\n  static final Box B = new Box(new int[1]);",
        "B.v()[0]++; return HarnessResult.of(\"\" + B.v()[0]);"), "static field 'B'");
    reject("nestedStaticCounter", harnessWith("Nested", "  static final class Holder { static int n; }",
        "Holder.n++; return HarnessResult.of(\"\" + Holder.n);"), "static field 'n' must be final");
    reject("staticStringBuilder", harnessWith("Sb", "  static final StringBuilder LOG = new StringBuilder();",
        "LOG.append('x'); return HarnessResult.of(\"\" + LOG.length());"), "static field 'LOG'");
    reject("globalTimeZone", harness("Tz", "TimeZone.setDefault(TimeZone.getTimeZone(\"GMT+5\"));"
        + " return HarnessResult.of(\"1\");"), "forbidden: java.util.TimeZone.setDefault");
    reject("globalLocale", harness("Loc", "Locale.setDefault(Locale.GERMANY); return HarnessResult.of(\"1\");"),
        "forbidden: java.util.Locale.setDefault");
    reject("finallyReturnSwallowsStackOverflow", harness("Swallow", "try { return HarnessResult.of(\"\" + down(0)); }"
        + " finally { return HarnessResult.of(\"survived\"); }"), "'return' may not leave a finally block");
    reject("finallyBreakSwallows", harness("SwallowBreak", "while (true) { try { down(0); } finally { break; } }"
        + " return HarnessResult.of(\"survived\");"), "'break' may not leave a finally block");
    reject("finallyContinueSwallows", harness("SwallowCont", "for (int i = 0; i < 2; i++) { try { down(0); }"
        + " finally { continue; } } return HarnessResult.of(\"survived\");"), "'continue' may not leave");
    reject("finallyThrowReplaces", harness("Replace", "try { down(0); } finally { if (p != null) {"
        + " throw new IllegalStateException(\"replaced\"); } } return null;"), "'throw' may not leave a finally");
    reject("hugeStringLiteral", harness("Lit", "return HarnessResult.of(\"" + "z".repeat(100_000) + "\");"),
        "constant string too long");
    reject("oversizedSource", harness("Big", "String s = \"\";\n" + "s = s + \"a\";\n".repeat(20_000)
        + "return HarnessResult.of(s);"), "over the limit of " + HarnessCompiler.MAX_SOURCE_CHARS);
  }

  /** Rejected by the compiler's allow-list. */
  static final Map<String, String> COMPILE_TIME = new LinkedHashMap<>();
  /** Compile, and must be contained at run time: status expected for every episode. */
  static final Map<String, String> RUN_TIME = new LinkedHashMap<>();
  static final Map<String, EpisodeStatus> RUN_TIME_STATUS = new LinkedHashMap<>();

  static {
    COMPILE_TIME.put("systemExit", harness("Exit", "System.exit(3); return null;"));
    COMPILE_TIME.put("runtimeHalt", harness("Halt", "Runtime.getRuntime().halt(3); return null;"));
    COMPILE_TIME.put("readFile", harness("ReadFile",
        "return HarnessResult.of(java.nio.file.Files.readString(java.nio.file.Path.of(\"/etc/passwd\")));"));
    COMPILE_TIME.put("writeFile", harness("WriteFile",
        "new java.io.FileOutputStream(\"/tmp/whale-pwned\").write(1); return HarnessResult.of(\"1\");"));
    COMPILE_TIME.put("socket", harness("Sock",
        "new java.net.Socket(\"127.0.0.1\", 7233).close(); return HarnessResult.of(\"1\");"));
    COMPILE_TIME.put("reflection", harness("Refl",
        "Object o = Class.forName(\"java.lang.System\").getMethod(\"exit\", int.class); return HarnessResult.of(\"1\");"));
    COMPILE_TIME.put("getClassReflection", harness("Refl2",
        "Object m = p.getClass().getDeclaredMethods(); return HarnessResult.of(\"1\");"));
    COMPILE_TIME.put("thread", harness("Thr",
        "new Thread(() -> { while (true) { } }).start(); return HarnessResult.of(\"1\");"));
    COMPILE_TIME.put("printForever", harness("Print",
        "while (true) { System.out.println(\"spam spam spam\"); }"));
    COMPILE_TIME.put("processBuilder", harness("Proc",
        "new ProcessBuilder(\"sh\", \"-c\", \"kill -9 -1\").start(); return HarnessResult.of(\"1\");"));
    COMPILE_TIME.put("catchThrowable", harness("Catch",
        "try { while (true) { } } catch (Throwable t) { return HarnessResult.of(\"1\"); }"));

    RUN_TIME.put("infiniteLoop", harness("Loop", "long i = 0; while (true) { i++; }"));
    RUN_TIME_STATUS.put("infiniteLoop", EpisodeStatus.TIMEOUT);
    RUN_TIME.put("loopInFinally", harness("LoopFinally",
        "try { while (true) { } } finally { int x = 0; while (true) { x++; } }"));
    RUN_TIME_STATUS.put("loopInFinally", EpisodeStatus.TIMEOUT);
    RUN_TIME.put("nestedLoopsInFinally", harness("NestedFinally", "int x = 0; try { try { while (true) { x++; } }"
        + " finally { while (true) { x++; } } } finally { while (true) { x++; } }"));
    RUN_TIME_STATUS.put("nestedLoopsInFinally", EpisodeStatus.TIMEOUT);
    // deeper than the runner stops it: the thread outlives the run, and its sandbox is not reused
    RUN_TIME.put("deepFinallyRecursion", harnessWith("DeepFinally", "  static int deep(int n) {\n"
        + "    if (n == 0) { while (true) { } }\n    try { return deep(n - 1); } finally { while (true) { } }\n  }",
        "return HarnessResult.of(\"\" + deep(300));"));
    RUN_TIME_STATUS.put("deepFinallyRecursion", EpisodeStatus.TIMEOUT);
    RUN_TIME.put("notesWithoutEnd", harness("Notes", "while (true) { ctx.note(\"spam spam spam spam\"); }"));
    RUN_TIME_STATUS.put("notesWithoutEnd", EpisodeStatus.TIMEOUT);
    RUN_TIME.put("hugeAnswer", harness("Huge",
        "StringBuilder b = new StringBuilder(); for (int i = 0; i < 2_000_000; i++) { b.append(\"9\"); }"
            + " return HarnessResult.of(b.toString());"));
    RUN_TIME_STATUS.put("hugeAnswer", EpisodeStatus.COMPLETED);
    RUN_TIME.put("allocateBeyondHeap", harness("Alloc",
        "List<long[]> keep = new ArrayList<>(); while (true) { keep.add(new long[1 << 20]); }"));
    RUN_TIME_STATUS.put("allocateBeyondHeap", EpisodeStatus.ERROR);
    RUN_TIME.put("throwing", harness("Throw", "throw new IllegalStateException(\"boom\");"));
    RUN_TIME_STATUS.put("throwing", EpisodeStatus.ERROR);
    RUN_TIME.put("returnNull", harness("Null", "return null;"));
    RUN_TIME_STATUS.put("returnNull", EpisodeStatus.ERROR);
    RUN_TIME.put("recursion", harness("Rec", "return HarnessResult.of(\"\" + down(0));"));
    RUN_TIME_STATUS.put("recursion", EpisodeStatus.ERROR);
    RUN_TIME.put("hugeToolInput", harness("BigTool",
        "return HarnessResult.of(ctx.tool(\"sentences\", \"x\".repeat(10 << 20)));"));
    RUN_TIME_STATUS.put("hugeToolInput", EpisodeStatus.ERROR);
    RUN_TIME.put("recursionCaughtAsException", harness("RecCatch",
        "try { return HarnessResult.of(\"\" + down(0)); } catch (Exception e) { return HarnessResult.of(\"1\"); }"));
    RUN_TIME_STATUS.put("recursionCaughtAsException", EpisodeStatus.ERROR);
    RUN_TIME.put("overTurnBudget", harness("Greedy",
        "String s = \"\"; while (true) { s = ctx.generate(\"Q: \" + p.question() + \"\\nA:\", 4); }"));
    RUN_TIME_STATUS.put("overTurnBudget", EpisodeStatus.TURN_BUDGET_EXCEEDED);
  }

  @BeforeAll
  static void start() {
    System.setProperty("ai.djl.offline", "true");
    model = LanguageModel.create(new ModelConfig(97, 160, 16, 1, 2, 4), 1);
    sandbox = new SandboxExecutor(SandboxPool.forThisJvm(2, 256), new SandboxHost(), 20, 5000);
  }

  @AfterAll
  static void stop() {
    sandbox.close();
    model.close();
  }

  static EpisodeRunner.Config config() {
    return EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofMillis(1500));
  }

  @Test
  void compileTimeCorpusIsRejectedWithADiagnosticAndTheSandboxRefusesItToo() {
    HarnessCompiler compiler = new HarnessCompiler();
    for (Map.Entry<String, String> e : COMPILE_TIME.entrySet()) {
      HarnessCompiler.Result r = compiler.tryCompile(e.getValue());
      assertFalse(r.ok(), e.getKey() + " compiled");
      assertFalse(r.errorText().isBlank(), e.getKey());
    }
    List<TaskProblem> ps = TASK.split(Split.HARNESS).subList(0, 1);
    IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> sandbox.run(model, TASK,
        COMPILE_TIME.get("systemExit"), ps, 1, 1, config(), l -> { }));
    assertTrue(ex.getMessage().contains("does not compile"), ex.getMessage());
  }

  @Test
  void issue14CorpusIsRejectedWithItsReasonHereAndByTheSandboxCheck() {
    HarnessCompiler compiler = new HarnessCompiler();
    for (Map.Entry<String, String[]> e : REJECTED_WITH_REASON.entrySet()) {
      String source = e.getValue()[0];
      String reason = e.getValue()[1];
      HarnessCompiler.Result r = compiler.tryCompile(source);
      assertFalse(r.ok(), e.getKey() + " compiled");
      assertTrue(r.errorText().contains(reason), e.getKey() + ": " + r.errorText());
      assertTrue(r.diagnostics().get(0).line() > 0 || reason.startsWith("over the limit"), e.getKey() + ": "
          + r.errorText());
      String checked = sandbox.checkHarness(source);
      assertTrue(checked != null && checked.contains(reason), e.getKey() + ": " + checked);
    }
  }

  @Test
  void aCompileBombStopsInTheSandboxNotInThisJvm() {
    StringBuilder b = new StringBuilder("static final String A0 = \"" + "x".repeat(64) + "\";\n");
    for (int i = 1; i <= 27; i++) {
      b.append("static final String A").append(i).append(" = A").append(i - 1).append(" + A").append(i - 1)
          .append(";\n");
    }
    String bomb = harnessWith("Fold", b.toString(), "return HarnessResult.of(A27.substring(0, 1));");
    String checked = sandbox.checkHarness(bomb);
    assertTrue(checked != null && checked.startsWith("compilation stopped"), checked);
    List<TaskProblem> ps = TASK.split(Split.HARNESS).subList(0, 1);
    IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> sandbox.run(model, TASK,
        bomb, ps, 1, 1, config(), l -> { }));
    assertTrue(ex.getMessage().contains("does not compile: compilation stopped"), ex.getMessage());
  }

  @Test
  void runTimeCorpusIsContainedAndTheRunGoesOn() {
    List<TaskProblem> ps = TASK.split(Split.HARNESS);
    for (Map.Entry<String, String> e : RUN_TIME.entrySet()) {
      assertTrue(new HarnessCompiler().tryCompile(e.getValue()).ok(), e.getKey() + " should compile");
      long t0 = System.nanoTime();
      int recycles = sandbox.leftoverRecycles();
      List<EpisodeResult> rs = sandbox.run(model, TASK, e.getValue(), ps, 2, 5, config(), l -> { });
      if (e.getKey().equals("deepFinallyRecursion")) {
        assertTrue(sandbox.leftoverRecycles() > recycles, "the sandboxes with a surviving thread reported it");
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("hostile %-20s %5d ms  %s: %s%n", e.getKey(), ms, rs.get(0).status(), rs.get(0).error());
      assertEquals(ps.size() * 2, rs.size(), e.getKey());
      for (EpisodeResult r : rs) {
        assertEquals(0.0, r.reward(), e.getKey());
        assertEquals(RUN_TIME_STATUS.get(e.getKey()), r.status(), e.getKey() + ": " + r.error());
        if (r.status() != EpisodeStatus.COMPLETED) {
          assertTrue(r.error() != null && !r.error().isBlank(), e.getKey());
          if (e.getKey().equals("hugeToolInput")) {
            assertTrue(r.error().contains("exceeds the cap of " + EpisodeRunner.MAX_TOOL_INPUT_CHARS), r.error());
          }
          if (e.getKey().startsWith("recursion")) {
            assertTrue(r.error().contains("StackOverflowError"), r.error());
          }
        } else {
          assertTrue(r.answer().length() <= config().maxAnswerChars(), e.getKey());
        }
      }
    }
    // the worker JVM is alive (we are here) and the pool still serves honest harnesses
    List<EpisodeResult> ok = sandbox.run(model, TASK, MathTemplates.initialHarnessSource(), ps, 2, 5, config(),
        l -> { });
    assertTrue(ok.stream().allMatch(r -> r.status() == EpisodeStatus.COMPLETED && r.turns() == 1), ok.toString());
    assertTrue(sandbox.pool().started() > 2, "crashed or recycled sandboxes were replaced");
  }
}
