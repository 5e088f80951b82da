package whale.workers.e2e;

import java.nio.file.Path;

/** One {@code whale worker} JVM per queue, sharing one artifact directory. Public for bench/. */
public final class Workers implements AutoCloseable {
  public final WorkerProcess control;
  public final WorkerProcess gpu;
  public final WorkerProcess harness;
  public final WorkerProcess eval;

  private Workers(String address, Path artifacts, Path logs) {
    control = new WorkerProcess("control", address, artifacts, logs);
    gpu = new WorkerProcess("gpu", address, artifacts, logs);
    harness = new WorkerProcess("harness", address, artifacts, logs);
    eval = new WorkerProcess("eval", address, artifacts, logs);
  }

  public static Workers start(String address, Path artifacts, Path logs) {
    Workers w = new Workers(address, artifacts, logs);
    w.control.start();
    w.gpu.start();
    w.harness.start();
    w.eval.start();
    return w;
  }

  @Override
  public void close() {
    for (WorkerProcess p : new WorkerProcess[] {control, gpu, harness, eval}) {
      p.close();
    }
  }
}
