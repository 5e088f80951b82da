package whale.workers;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code whale} command line. */
@Command(name = "whale", mixinStandardHelpOptions = true, version = "whale 0.1.0",
    description = "WHALE (Weight-Harness Alternating LEarning) as a durable Temporal workflow.",
    subcommands = {DemoCommand.class, WorkerCommand.class, StartCommand.class,
        SignalCommand.class, StatusCommand.class, TasksCommand.class, CompareCommand.class, ReportCommand.class,
        GenerateCommand.class, ExportCommand.class, RenderCommand.class, ImportGgufCommand.class,
        ModelsCommand.class})
public class WhaleCli implements Runnable {
  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }

  public static void main(String[] args) {
    // DJL must never try the network: its natives come from Maven jars; no telemetry.
    System.setProperty("ai.djl.offline", "true");
    // PyTorch threads: LanguageModel sets one intra-op thread (-Dai.djl.pytorch.num_threads=N: N).
    System.exit(commandLine().execute(args));
  }

  /** The command line as main runs it: a failure prints "whale: reason" and exits 2. */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new WhaleCli());
    cli.setExecutionExceptionHandler((ex, cmd, parsed) -> {
      cmd.getErr().println("whale: " + Failures.rootMessage(ex));
      return 2;
    });
    return cli;
  }
}
