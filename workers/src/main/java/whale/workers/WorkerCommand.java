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

  @Option(names = "--artifacts", description = "Artifact store directory, shared by all workers "
      + "(default: $WHALE_ARTIFACTS or ./whale-artifacts).")
  Path artifacts;

  @Option(names = "--device", description = "cpu or cuda: with cuda, refuse to start unless the "
      + "PyTorch engine sees a GPU, saying what is missing (default: $WHALE_DEVICE, else cpu). "
      + "Runs whose spec says model.device cuda need their gpu and eval workers started so.")
  String device;

  @Option(names = "--metrics-port", description = "Serve Prometheus metrics on this port at /metrics "
      + "(default: $WHALE_METRICS_PORT, else off)")
  Integer metricsPort;

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
    ActivityRuntime runtime = ActivityRuntime.open(Artifacts.dir(artifacts));
    WorkerFactory factory = WorkerFactory.newInstance(client);
    WhaleWorkers.register(factory, qs, runtime);
    factory.start();
    System.out.println("whale worker on " + connection.address() + " namespace "
        + connection.namespace() + " serving " + qs + ", artifacts at " + runtime.store().root());
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
      done.countDown();
    }));
    done.await();
    return 0;
  }
}
