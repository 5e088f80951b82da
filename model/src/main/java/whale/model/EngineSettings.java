package whale.model;

/**
 * whale's settings for DJL's PyTorch engine, applied once per JVM before the engine starts, whichever
 * model class loads first: the CPU instruction-set pins (libtorch reads them when it first
 * computes), offline, one intra-op and one inter-op thread unless the operator says otherwise, and
 * glibc's mmap threshold if one was set.
 */
public final class EngineSettings {
  private EngineSettings() {}

  static {
    // The instruction-set pins first: libtorch reads them when it first computes (CpuPins).
    CpuPins.mode();
    // Never reach for the network (model zoo, engine downloads) or send usage tracking.
    System.setProperty("ai.djl.offline", "true");
    // One intra-op and one inter-op thread unless the operator says otherwise: for a model this small
    // a second thread is slower (1500 pretraining steps: 12 s with one, 21 s with two; on a busy
    // 2-core machine spinning OpenMP workers made a forward pass 5-10x slower), and two threads
    // reorder float sums, so the same seeded training gave visibly different models in different
    // processes (with one thread they agree to a point or so; kernels may still depend on alignment).
    // Parallelism comes from activities running side by side. Read when the engine starts.
    if (System.getProperty("ai.djl.pytorch.num_threads") == null) {
      System.setProperty("ai.djl.pytorch.num_threads", "1");
    }
    if (System.getProperty("ai.djl.pytorch.num_interop_threads") == null) {
      System.setProperty("ai.djl.pytorch.num_interop_threads", "1");
    }
    // before libtorch allocates: the fixed mmap threshold, if the operator set one (NativeHeap)
    NativeHeap.mmapThreshold();
  }

  /**
   * Starts the PyTorch engine with these settings and says which kernels it runs
   * ({@link CpuPins#describe}), for a worker's first lines.
   */
  public static String startEngine() {
    ai.djl.engine.Engine.getEngine("PyTorch");
    return CpuPins.describe();
  }

  /** Applies the settings (once; later calls do nothing). Call from a model class's static block. */
  public static void apply() {
    // the class's static block has run by the time this body runs
  }
}
