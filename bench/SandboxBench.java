import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import whale.bench.Spread;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.HarnessCompiler;
import whale.task.math.MathTemplates;
import whale.model.LanguageModel;
import whale.model.ModelConfig;
import whale.sandbox.EpisodeExecutor;
import whale.sandbox.InProcessExecutor;
import whale.sandbox.SandboxExecutor;
import whale.task.math.MathTask;
import whale.task.Split;
import whale.task.TaskProblem;

/**
 * Sandbox cost (bench/README.md, figure 2): episodes per second on the math task, the starting
 * harness h0 through the sandbox pool (2 processes) against the same harness in-process, same
 * model, problems, samples and seeds. One warm-up each (JIT, sandbox start), then repeats pairs,
 * the order alternated, each pair's ratio reported as median and spread. Usage: bench/sandbox.sh
 * [problems] [samples] [repeats]
 */
public class SandboxBench {
  public static void main(String[] args) throws Exception {
    int problems = args.length > 0 ? Integer.parseInt(args[0]) : 64;
    int samples = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    System.setProperty("ai.djl.offline", "true");
    MathTask task = new MathTask(1234, 16, problems, 16);
    List<TaskProblem> ps = task.split(Split.HARNESS);
    // the demo's model shape (untrained weights sample at the same speed)
    try (LanguageModel model = LanguageModel.create(new ModelConfig(97, 160, 64, 2, 4, 4), 1);
        SandboxExecutor sandbox = SandboxExecutor.create(2, 256)) {
      EpisodeExecutor inProcess = new InProcessExecutor(new HarnessCompiler());
      String src = MathTemplates.initialHarnessSource();
      EpisodeRunner.Config config = EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofSeconds(30));
      String[] names = {"in-process", "sandbox"};
      EpisodeExecutor[] ex = {inProcess, sandbox};
      for (int k = 0; k < 2; k++) {
        ex[k].run(model, task, src, ps.subList(0, 8), samples, 99, config, l -> { }); // warm-up
      }
      List<Double> ratios = new ArrayList<>();
      List<List<Double>> rates = List.of(new ArrayList<>(), new ArrayList<>());
      List<List<Double>> rewards = List.of(new ArrayList<>(), new ArrayList<>());
      for (int r = 0; r < repeats; r++) {
        double[] eps = new double[2];
        for (int j = 0; j < 2; j++) {
          int k = (j + r) % 2; // alternate which side goes first
          long t0 = System.nanoTime();
          List<EpisodeResult> rs = ex[k].run(model, task, src, ps, samples, r, config, l -> { });
          double s = (System.nanoTime() - t0) / 1e9;
          eps[k] = rs.size() / s;
          rates.get(k).add(eps[k]);
          rewards.get(k).add(rs.stream().mapToDouble(EpisodeResult::reward).average().orElse(0));
          System.out.printf(Locale.ROOT, "repeat %d %-10s %4d episodes %6.2f s %7.1f episodes/s%n",
              r, names[k], rs.size(), s, eps[k]);
        }
        ratios.add(eps[1] / eps[0]);
      }
      double med = Spread.median(ratios);
      StringBuilder md = new StringBuilder("## 2. Sandbox cost\n\n| figure | measured | goal | met |\n|---|---|---|---|\n");
      md.append(String.format(Locale.ROOT, "| episodes/s sandbox / in-process | %s | >= 0.9 | %s |%n",
          Spread.of(ratios, "%.3f"), med >= 0.9 ? "yes" : "no"));
      md.append(String.format(Locale.ROOT, "| episodes/s in-process | %s | | |%n", Spread.of(rates.get(0), "%.1f")));
      md.append(String.format(Locale.ROOT, "| episodes/s sandbox | %s | | |%n", Spread.of(rates.get(1), "%.1f")));
      md.append(String.format(Locale.ROOT, "| same rewards both ways | %s | equal | %s |%n",
          rewards.get(0).equals(rewards.get(1)) ? "yes" : "no: " + rewards,
          rewards.get(0).equals(rewards.get(1)) ? "yes" : "NO"));
      md.append(String.format(Locale.ROOT, "%nThe math task's h0 on %d problems x %d samples = %d "
          + "episodes per measurement, the demo's model shape (untrained), a sandbox pool of 2 "
          + "processes of 256 MiB heap; one warm-up each, then %d pairs, the order alternated.%n%n",
          ps.size(), samples, ps.size() * samples, repeats));
      Files.writeString(Path.of(System.getenv().getOrDefault("BENCH_OUT", "/dev/stdout")), md,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
  }

}
