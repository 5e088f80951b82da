import java.time.Duration;
import java.util.List;
import whale.harness.EpisodeResult;
import whale.harness.EpisodeRunner;
import whale.harness.HarnessCompiler;
import whale.harness.TemplateProposer;
import whale.model.LanguageModel;
import whale.model.ModelConfig;
import whale.sandbox.EpisodeExecutor;
import whale.sandbox.InProcessExecutor;
import whale.sandbox.SandboxExecutor;
import whale.task.MathTask;
import whale.task.Split;
import whale.task.TaskProblem;

/**
 * Episodes per second on the math task: the starting harness h0 through the sandbox pool (2
 * processes) against the same harness in-process, same model, problems, samples and seeds. Not a
 * test. Usage: bench/run.sh [problems] [samples] [repeats]
 */
public class SandboxBench {
  public static void main(String[] args) throws Exception {
    int problems = args.length > 0 ? Integer.parseInt(args[0]) : 64;
    int samples = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    System.setProperty("ai.djl.offline", "true");
    MathTask task = new MathTask(1234, 16, problems, 16);
    List<TaskProblem> ps = task.split(Split.HARNESS);
    // the demo's model shape (untrained weights sample at the same speed)
    try (LanguageModel model = LanguageModel.create(new ModelConfig(97, 160, 64, 2, 4, 4), 1);
        SandboxExecutor sandbox = SandboxExecutor.create(2, 256)) {
      EpisodeExecutor inProcess = new InProcessExecutor(new HarnessCompiler());
      String src = TemplateProposer.initialHarnessSource();
      EpisodeRunner.Config config = EpisodeRunner.Config.defaults().withEpisodeTimeout(Duration.ofSeconds(30));
      double[] rate = new double[2];
      String[] names = {"in-process", "sandbox"};
      EpisodeExecutor[] ex = {inProcess, sandbox};
      for (int k = 0; k < 2; k++) {
        ex[k].run(model, task, src, ps.subList(0, 4), 2, 99, config, l -> { }); // warm-up (JIT, sandbox start)
      }
      for (int r = 0; r < repeats; r++) {
        for (int k = 0; k < 2; k++) {
          long t0 = System.nanoTime();
          List<EpisodeResult> rs = ex[k].run(model, task, src, ps, samples, r, config, l -> { });
          double s = (System.nanoTime() - t0) / 1e9;
          double eps = rs.size() / s;
          rate[k] += eps / repeats;
          System.out.printf("repeat %d %-10s %4d episodes %6.2f s %7.1f episodes/s mean reward %.3f%n", r,
              names[k], rs.size(), s, eps, rs.stream().mapToDouble(EpisodeResult::reward).average().orElse(0));
        }
      }
      System.out.printf("mean: in-process %.1f episodes/s, sandbox %.1f episodes/s, ratio sandbox/in-process %.3f%n",
          rate[0], rate[1], rate[1] / rate[0]);
    }
  }
}
