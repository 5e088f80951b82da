package whale.workers;

import io.temporal.worker.WorkerFactory;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import whale.activities.ActivityRuntime;
import whale.model.LanguageModel;
import whale.model.hf.CudaCheck;
import whale.model.hf.HfModel;

@Command(name = "worker", mixinStandardHelpOptions = true,
    description = "Serve whale task queues against a Temporal service until stopped.")
public class WorkerCommand implements java.util.concurrent.Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin Connection connection;

  @Option(names = "--queues", defaultValue = "control,gpu,harness,eval",
      description = "Comma-separated: control, gpu, harness, eval (default: all).")
  String queues;

  @Mixin Artifacts artifacts = new Artifacts();

  @Option(names = "--device", description = "cpu or cuda: with cuda, refuse to start unless the "
      + "PyTorch engine sees a GPU, saying what is missing (default: $WHALE_DEVICE, else cpu). "
      + "Runs whose spec says model.device cuda need their gpu and eval workers started so.")
  String device;

  @Option(names = "--metrics-port", description = "Serve Prometheus metrics on this port at /metrics "
      + "(default: $WHALE_METRICS_PORT, else off)")
  Integer metricsPort;

  @Option(names = "--vllm-servers", split = ",", description = "vLLM servers (URLs) that sample the "
      + "episodes of runs whose spec says rollouts.backend vllm without naming servers; checked at "
      + "start (default: $WHALE_VLLM_SERVERS, comma-separated)")
  java.util.List<String> vllmServers;

  @Option(names = "--vllm-serve", description = "Start and supervise a vLLM server for this Hugging "
      + "Face model directory (or known model name) on a loopback port: restarted when it dies, "
      + "stopped with the worker, its log under the artifact store's logs/. Needs vLLM "
      + "($WHALE_VLLM, else ~/.cache/whale/vllm-venv/bin/vllm from deploy/vllm/install-cpu.sh).")
  String vllmServe;

  @Override
  public Integer call() throws Exception {
    EnumSet<Queue> qs = Queue.parse(queues);
    if (device == null) {
      device = System.getenv().getOrDefault("WHALE_DEVICE", "cpu");
    }
    HfModel.Placement.Device on;
    try {
      on = HfModel.Placement.Device.of(device);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "--device (or WHALE_DEVICE): cpu or cuda, "
          + "got '" + device + "'");
    }
    if (on == HfModel.Placement.Device.CUDA) {
      CudaCheck.require(); // before connecting: a worker that cannot use the GPU takes no task
      System.out.println("GPU: the PyTorch engine sees " + CudaCheck.gpuCount() + " GPU(s)");
    }
    if (metricsPort == null && System.getenv("WHALE_METRICS_PORT") != null) {
      metricsPort = Integer.parseInt(System.getenv("WHALE_METRICS_PORT"));
    }
    MetricsServer metrics = metricsPort == null ? null : new MetricsServer(metricsPort);
    if (metrics != null) {
      System.out.println("metrics on http://0.0.0.0:" + metrics.port() + "/metrics");
    }
    var service = connection.service(metrics == null ? null : metrics.scope());
    var client = connection.client(service);
    if (qs.contains(Queue.CONTROL)) {
      var added = SearchAttributeSetup.ensure(service, connection.namespace());
      if (!added.isEmpty()) {
        System.out.println("registered search attributes " + added);
      }
    }
    ActivityRuntime runtime = ActivityRuntime.open(artifacts.open());
    runtime.vllm(vllm(runtime));
    WorkerFactory factory = WorkerFactory.newInstance(client);
    WhaleWorkers.register(factory, qs, runtime);
    factory.start();
    System.out.println("whale worker on " + connection.address() + " namespace "
        + connection.namespace() + " serving " + qs + ", artifacts at " + runtime.store().describe());
    StringBuilder slots = new StringBuilder("activity slots:");
    for (Queue q : qs) {
      if (q != Queue.CONTROL) {
        slots.append(' ').append(q.name().toLowerCase(java.util.Locale.ROOT)).append(' ')
            .append(WhaleWorkers.slots(q, qs));
      }
    }
    System.out.println(slots + " (whale.cpuSlots / WHALE_CPU_SLOTS: " + WhaleWorkers.cpuSlots() + ")");
    if (qs.contains(Queue.GPU) || qs.contains(Queue.EVAL)) {
      System.out.println(whale.model.EngineSettings.startEngine() + " (whale.cpuPins / WHALE_CPU_PINS)");
    }
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      factory.shutdown();
      runtime.vllm().close(); // a managed server goes with its worker
      done.countDown();
    }));
    done.await();
    return 0;
  }

  /** The vLLM servers this worker samples on: started here, or attached and checked. */
  private whale.activities.VllmRollouts vllm(ActivityRuntime runtime) throws java.io.IOException {
    if (vllmServe != null) {
      if (vllmServers != null && !vllmServers.isEmpty()) {
        throw new ParameterException(spec.commandLine(), "--vllm-serve and --vllm-servers: one or the other");
      }
      Path dir = whale.activities.HfPolicy.modelDirectory(modelSpec(vllmServe), System.out);
      Path log = runtime.store().root().resolve("logs").resolve("vllm.log");
      System.out.println("starting vLLM for " + dir + " (log " + log + ")");
      var server = whale.model.vllm.VllmServer.start(whale.model.vllm.VllmServer.Settings.cpu(
          whale.model.vllm.VllmServer.defaultExecutable(), dir, dir.getFileName().toString(), log));
      System.out.println("vLLM serving on " + server.url());
      return whale.activities.VllmRollouts.managed(server);
    }
    if (vllmServers == null && System.getenv("WHALE_VLLM_SERVERS") != null) {
      vllmServers = java.util.List.of(System.getenv("WHALE_VLLM_SERVERS").split(","));
    }
    java.util.List<String> urls = vllmServers == null ? java.util.List.of() : vllmServers;
    for (String url : urls) {
      try {
        var models = new whale.model.vllm.VllmClient(url, java.time.Duration.ofSeconds(10)).models();
        System.out.println("vLLM at " + url + " serves " + models.stream()
            .map(whale.model.vllm.VllmClient.ServedModel::id).toList());
      } catch (whale.model.vllm.VllmException | IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), "--vllm-servers: " + e.getMessage());
      }
    }
    return whale.activities.VllmRollouts.attach(urls);
  }

  /** A model directory or a name whale knows, as the spec's model section would say it. */
  private static whale.workflows.ExperimentSpec.ModelSpec modelSpec(String pathOrName) {
    boolean known = !pathOrName.contains("/") && !java.nio.file.Files.exists(Path.of(pathOrName));
    var json = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
    json.put("task", "math");
    var model = json.putObject("model").put("source", "huggingface");
    if (known) {
      model.put("name", pathOrName);
    } else {
      model.put("path", Path.of(pathOrName).toAbsolutePath().toString());
    }
    return whale.workflows.SpecJson.parse(json.toString()).model();
  }
}
