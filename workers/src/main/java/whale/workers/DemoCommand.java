package whale.workers;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TemporalDevServerOptions;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import whale.activities.ActivityRuntime;
import whale.model.LanguageModel;
import whale.workflows.ExperimentSpec;
import whale.workflows.RunEvent;
import whale.workflows.SpecJson;
import whale.workflows.WhaleResult;
import whale.workflows.WhaleSearchAttributes;
import whale.workflows.WhaleStatus;
import whale.workflows.WhaleWorkflow;

/**
 * Everything in one JVM: a Temporal service (the real dev server when a {@code temporal} binary is
 * on the PATH, else the in-process Java test server), all four workers, and a small WHALE run.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Run a small WHALE experiment end to end in this process.")
public class DemoCommand implements Callable<Integer> {
  @Option(names = "--task", defaultValue = "math",
      description = "Built-in demo to run: math, chess or searchqa (default: ${DEFAULT-VALUE}); "
          + "its spec is the jar's demo-<task>.json")
  String task;

  @Option(names = "--spec", description = "Spec file (overrides --task)")
  Path specFile;

  @Mixin Artifacts artifacts = new Artifacts();

  @Option(names = "--test-server", description = "Use the in-process Java test server even if a "
      + "temporal binary is on the PATH.")
  boolean forceTestServer;

  @Override
  public Integer call() throws Exception {
    long t0 = System.nanoTime();
    ExperimentSpec spec = SpecJson.parse(specFile == null ? builtinSpec(task) : Files.readString(specFile));
    DataFiles.check(spec, true);
    ActivityRuntime runtime = ActivityRuntime.open(artifacts.open());
    System.out.println(whale.model.EngineSettings.startEngine());
    Optional<Path> temporal = forceTestServer ? Optional.empty() : findOnPath("temporal");
    try (TestWorkflowEnvironment env = environment(temporal)) {
      WhaleWorkers.register(env.getWorkerFactory(), EnumSet.allOf(Queue.class), runtime);
      env.start();
      WorkflowClient client = env.getWorkflowClient();
      String id = "whale-demo-" + System.currentTimeMillis();
      WhaleWorkflow wf = client.newWorkflowStub(WhaleWorkflow.class, WorkflowOptions.newBuilder()
          .setTaskQueue(WhaleWorkflow.TASK_QUEUE).setWorkflowId(id).build());
      System.out.println("started workflow " + id + "; artifacts at " + runtime.store().describe());
      CompletableFuture<WhaleResult> done = WorkflowClient.execute(wf::run, spec, null);
      WhaleResult result = follow(client.newWorkflowStub(WhaleWorkflow.class, id), done);
      System.out.println();
      System.out.println(Report.result(spec, result));
      System.out.printf(Locale.ROOT, "wall time %.1f s%n", (System.nanoTime() - t0) / 1e9);
      return 0;
    }
  }

  /** Prints each new event of the run as it happens (the history query), until the run ends. */
  private static WhaleResult follow(WhaleWorkflow wf, CompletableFuture<WhaleResult> done)
      throws Exception {
    int printed = 0;
    String lastPhase = "";
    while (true) {
      boolean finished = done.isDone();
      try {
        WhaleStatus s = wf.status();
        if (!s.phase().equals(lastPhase)) {
          lastPhase = s.phase();
          System.out.printf(Locale.ROOT, "== phase %s (round %d)%n", s.phase(), s.round());
        }
        List<RunEvent> events = wf.history();
        for (; printed < events.size(); printed++) {
          System.out.println(Report.event(events.get(printed), s.budgetSteps()));
        }
      } catch (RuntimeException e) {
        if (finished) {
          break; // a closed run may stop answering queries on some servers; the result says all
        }
      }
      if (finished) {
        return done.get();
      }
      try {
        return done.get(1, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        // keep following
      }
    }
    return done.get();
  }

  public static TestWorkflowEnvironment environment(Optional<Path> temporal) throws IOException {
    if (temporal.isPresent()) {
      int port = freePort();
      int ui = freePort();
      TestWorkflowEnvironment env = TestWorkflowEnvironment.startLocal(
          TestEnvironmentOptions.newBuilder().setUseTimeskipping(false).build(),
          TemporalDevServerOptions.newBuilder()
              .setExistingPath(temporal.get().toString())
              .setPort(port)
              .setUiEnabled(true)
              .setUiPort(ui)
              .setLogLevel("error")
              .setExtraArgs(WhaleSearchAttributes.devServerArgs())
              .build());
      System.out.println("Temporal dev server " + temporal.get() + " on localhost:" + port
          + "; Web UI at http://localhost:" + ui);
      return env;
    }
    TestEnvironmentOptions.Builder b = TestEnvironmentOptions.newBuilder().setUseTimeskipping(false);
    WhaleSearchAttributes.ALL.forEach(b::registerSearchAttribute);
    System.out.println("Temporal: in-process Java test server (put a `temporal` binary on the "
        + "PATH to use the real dev server and its Web UI)");
    return TestWorkflowEnvironment.newInstance(b.build());
  }

  static String builtinSpec(String task) throws IOException {
    String resource = "/demo-" + task + ".json";
    try (InputStream in = DemoCommand.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalArgumentException("no built-in demo for task '" + task + "' (" + resource
            + " is not in the jar); tasks: " + String.join(", ", whale.activities.TaskCatalog.names()));
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  public static Optional<Path> findOnPath(String binary) {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path p = Path.of(dir, binary);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
