package whale.activities;

import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;
import whale.chat.ChatTemplate;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.ModelLimits;
import whale.model.SamplingParams;

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

  /**
   * {@code model} with each batch of generation computed under this gate. Episode runs (evaluations,
   * RSFT steps' rollouts) take a core per model call rather than for the whole activity: between two
   * calls a run waits for its sandboxes to run the harness code, and a core held through that wait
   * sat idle (a comparison's harness phases used 1.3 of 2 cores).
   */
  static Generator gated(Generator model) {
    return new Generator() {
      @Override
      public List<Completion> generate(List<GenerationRequest> requests, SamplingParams params) {
        return run(() -> model.generate(requests, params));
      }

      @Override
      public ModelLimits limits() {
        return model.limits();
      }

      @Override
      public long residentBytes() {
        return model.residentBytes();
      }

      @Override
      public ChatTemplate chatTemplate() {
        return model.chatTemplate();
      }
    };
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
