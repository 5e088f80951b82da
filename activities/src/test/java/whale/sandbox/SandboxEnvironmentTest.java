package whale.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.TimeZone;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import whale.harness.CompiledHarness;
import whale.harness.HarnessCompiler;
import whale.harness.HarnessContext;
import whale.task.Problem;

/** What a sandbox JVM inherits from its worker (nothing), and what it notices after an episode. */
@Timeout(120)
class SandboxEnvironmentTest {
  static final String SECRET = "whale-planted-secret-7f3a";

  /** Stands in for a sandbox: reports what it sees after the port line. */
  public static final class Probe {
    public static void main(String[] args) throws Exception {
      System.out.println(SandboxMain.PORT_LINE + "1");
      System.out.flush();
      System.out.println("ENV=" + new TreeSet<>(System.getenv().keySet()) + " TZ=" + TimeZone.getDefault().getID()
          + " LOCALE=" + Locale.getDefault() + " CHARSET=" + Charset.defaultCharset() + " END");
      System.out.flush();
      Thread.sleep(60_000);
    }
  }

  /** Stands in for a worker with a secret, a time zone and a locale in its environment. */
  public static final class Worker {
    public static void main(String[] args) throws Exception {
      System.out.println("WORKER SECRET=" + System.getenv("WHALE_PLANTED_SECRET") + " TZ="
          + TimeZone.getDefault().getID() + " LOCALE=" + Locale.getDefault());
      SandboxProcess sb = SandboxProcess.start(
          SandboxProcess.command(System.getProperty("java.class.path"), 64, Probe.class.getName()), 30_000);
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!sb.outputTail().contains("END") && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        System.out.println("SANDBOX " + sb.outputTail().strip());
      } finally {
        sb.kill("done");
      }
    }
  }

  @Test
  void aSandboxSeesNoneOfTheWorkersEnvironmentAndFixedSettings() throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Worker.class.getName()).redirectErrorStream(true);
    pb.environment().put("WHALE_PLANTED_SECRET", SECRET);
    pb.environment().put("TZ", "Asia/Tokyo");
    pb.environment().put("LANG", "fr_FR.UTF-8");
    pb.environment().put("LC_ALL", "fr_FR.UTF-8");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    // the planted settings reached the worker ...
    assertTrue(out.contains("WORKER SECRET=" + SECRET + " TZ=Asia/Tokyo"), out);
    // ... and none of them, nor any other variable, the sandbox it started
    assertTrue(out.contains("SANDBOX ENV=[] TZ=UTC LOCALE=en_US CHARSET=UTF-8 END"), out);
    assertEquals(1, out.split(SECRET, -1).length - 1, out);
  }

  /** Blocks in harness code until released. */
  static final class GateContext implements HarnessContext {
    final CountDownLatch entered = new CountDownLatch(1);
    final AtomicBoolean release = new AtomicBoolean();

    public String generate(String prompt, int maxNewTokens) {
      entered.countDown();
      if (release.get()) {
        throw new IllegalStateException("released");
      }
      return "";
    }

    public String tool(String name, String input) {
      return "";
    }

    public int turnsUsed() {
      return 0;
    }

    public int turnBudget() {
      return 16;
    }

    public void note(String text) {}
  }

  @Test
  void harnessWorkLeftAfterItsEpisodesIsFound() throws Exception {
    assertNull(SandboxMain.leftoverHarnessWork(0), "nothing left before the test");
    CompiledHarness h = new HarnessCompiler().compile("import whale.harness.*;\nimport whale.task.Problem;\n"
        + "public class Spin implements Harness {\n"
        + "  public HarnessResult solve(Problem p, HarnessContext ctx) {\n"
        + "    while (true) { ctx.generate(\"x\", 1); }\n  }\n}\n");
    GateContext ctx = new GateContext();
    Thread t = new Thread(() -> {
      try {
        h.newInstance().solve(new Problem("p", "q"), ctx);
      } catch (Exception e) {
        // released
      }
    }, "some-thread");
    t.start();
    assertTrue(ctx.entered.await(10, TimeUnit.SECONDS));
    String left = SandboxMain.leftoverHarnessWork(100);
    assertNotNull(left);
    assertTrue(left.startsWith("harness work outlived its episodes: thread some-thread: running harness code"
        + " (whale-harness//Spin.solve"), left);
    ctx.release.set(true);
    t.join(10_000);
    assertFalse(t.isAlive());
    assertNull(SandboxMain.leftoverHarnessWork(500));

    // a busy common-pool worker (what a parallel stream leaves behind)
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch running = new CountDownLatch(1);
    ForkJoinPool.commonPool().execute(() -> {
      running.countDown();
      while (!stop.get()) {
        Thread.onSpinWait();
      }
    });
    assertTrue(running.await(10, TimeUnit.SECONDS));
    String busy = SandboxMain.leftoverHarnessWork(100);
    stop.set(true);
    assertNotNull(busy);
    assertTrue(busy.contains("common-pool worker still busy"), busy);
    assertNull(SandboxMain.leftoverHarnessWork(2000));
  }
}
