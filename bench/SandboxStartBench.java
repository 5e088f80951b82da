import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import whale.bench.Spread;
import whale.harness.HarnessForm;
import whale.sandbox.SandboxClasspath;
import whale.sandbox.SandboxExecutor;
import whale.sandbox.SandboxHost;
import whale.sandbox.SandboxPool;
import whale.task.math.MathTemplates;

/**
 * A sandbox JVM's start on the worker's whole class path (workers/target/whale-workers.jar, whose
 * manifest names all of lib/) against the sandbox module's own jars (SandboxClasspath): time to the
 * first verdict of a harness check (JVM start, gRPC server, javac on h0), time of a second check (javac
 * only), and the sandbox's resident memory after them. Fresh processes, the two class paths
 * alternated. Usage: bench/sandbox-start.sh [repeats]
 */
public class SandboxStartBench {
  public static void main(String[] args) throws Exception {
    int repeats = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    Path target = Path.of("workers/target");
    Path sandboxJar;
    try (Stream<Path> s = Files.list(target.resolve("lib"))) {
      sandboxJar = s.filter(p -> p.getFileName().toString().startsWith("whale-sandbox-")).findFirst()
          .orElseThrow(() -> new IllegalStateException("no whale-sandbox jar in workers/target/lib: build first"));
    }
    String full = target.resolve("whale-workers.jar").toAbsolutePath().toString();
    String narrow = SandboxClasspath.narrow(sandboxJar.toAbsolutePath())
        .orElseThrow(() -> new IllegalStateException("a listed jar is missing from workers/target/lib"));
    String h0 = new MathTemplates().initial(HarnessForm.COMPLETION).source();
    String h1 = new MathTemplates().initial(HarnessForm.CHAT).source();
    String[] names = {"whole worker class path", "sandbox's own jars"};
    String[] cps = {full, narrow};
    List<List<Double>> first = List.of(new ArrayList<>(), new ArrayList<>());
    List<List<Double>> second = List.of(new ArrayList<>(), new ArrayList<>());
    List<List<Double>> rss = List.of(new ArrayList<>(), new ArrayList<>());
    for (int r = 0; r <= repeats; r++) { // r = 0: warm-up (page cache, JIT of this JVM), not counted
      for (int k = 0; k < 2; k++) {
        int i = (r % 2 == 0) ? k : 1 - k;
        try (SandboxExecutor ex = new SandboxExecutor(new SandboxPool(1, cps[i], 256), new SandboxHost(), 20,
            15_000)) {
          long t0 = System.nanoTime();
          String e0 = ex.checkHarness(h0);
          long t1 = System.nanoTime();
          String e1 = ex.checkHarness(h1);
          long t2 = System.nanoTime();
          if (e0 != null || e1 != null) {
            throw new IllegalStateException("h0 did not compile in the sandbox: " + e0 + " / " + e1);
          }
          double kb = sandboxRssKb();
          if (r > 0) {
            first.get(i).add((t1 - t0) / 1e6);
            second.get(i).add((t2 - t1) / 1e6);
            rss.get(i).add(kb / 1024);
          }
        }
      }
    }
    StringBuilder md = new StringBuilder(String.format(Locale.ROOT,
        "| sandbox class path | jars | first check, ms (start + javac) | second check, ms | RSS, MB |%n|---|---:|---:|---:|---:|%n"));
    for (int i = 0; i < 2; i++) {
      int jars = cps[i].equals(full) ? (int) Files.list(target.resolve("lib")).count() + 1
          : cps[i].split(java.io.File.pathSeparator).length;
      md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s |%n", names[i], jars,
          Spread.of(first.get(i), "%.0f"), Spread.of(second.get(i), "%.0f"), Spread.of(rss.get(i), "%.0f")));
    }
    md.append(String.format(Locale.ROOT, "%n%d fresh sandboxes per class path: median (min-max)%n", repeats));
    String out = System.getenv().getOrDefault("BENCH_OUT", "/dev/stdout");
    Files.writeString(Path.of(out), md.toString(), java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
  }

  /** VmRSS of this JVM's one sandbox child (kB). */
  static double sandboxRssKb() throws Exception {
    List<ProcessHandle> kids = ProcessHandle.current().children()
        .filter(p -> p.info().commandLine().orElse("").contains("whale.sandbox.SandboxMain")).toList();
    if (kids.size() != 1) {
      throw new IllegalStateException("expected one sandbox process, found " + kids.size());
    }
    for (String line : Files.readAllLines(Path.of("/proc/" + kids.get(0).pid() + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Double.parseDouble(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS");
  }
}
