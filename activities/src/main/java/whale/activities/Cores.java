package whale.activities;

import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * The cores this process's model work may use at once: pretraining, RSFT steps and evaluations each
 * run single-threaded PyTorch on one core, on the gpu and eval queues alike. Without a GPU a worker
 * serving both queues gives each queue as many activity slots as cores (a queue short of work must
 * not leave a core idle) and this gate keeps the two together at that many computing at once, so
 * cores are neither idle nor time-sliced between attempts.
 */
public final class Cores {
  private static volatile Semaphore permits = new Semaphore(Runtime.getRuntime().availableProcessors());
  private static volatile int count = Runtime.getRuntime().availableProcessors();

  private Cores() {}

  /** Sets how many model activities compute at once in this process (before any runs). */
  public static void set(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("cores must be at least 1, got " + n);
    }
    if (n != count) {
      permits = new Semaphore(n, true);
      count = n;
    }
  }

  public static int count() {
    return count;
  }

  /** Runs {@code work} once a core is free (waiting interruptibly: an abandoned attempt stops). */
  static <T> T run(Supplier<T> work) {
    Semaphore s = permits;
    try {
      s.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("abandoned while waiting for a core", e);
    }
    try {
      return work.get();
    } finally {
      s.release();
    }
  }
}
