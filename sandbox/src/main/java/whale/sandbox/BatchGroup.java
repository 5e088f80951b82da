package whale.sandbox;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import whale.model.Completion;
import whale.model.GenerationRequest;
import whale.model.Generator;
import whale.model.SamplingParams;

/**
 * Dynamic batching across sandboxes: the Generate calls of one episode run (all its shards) are
 * collected and sent to the model as ONE batch. Lock-step like {@link whale.harness.EpisodeRunner}:
 * a batch goes as soon as every active shard has a call pending (each shard's own runner already
 * sends one call per quiescent point), or when the collection window has passed since the first
 * pending call, so a shard running slow harness code delays the others by at most the window.
 */
final class BatchGroup implements AutoCloseable {
  private final Generator model;
  private final SamplingParams sampling;
  private final long windowNanos;
  private final Thread thread;
  private final List<Pending> queue = new ArrayList<>();
  private final AtomicInteger batches = new AtomicInteger();
  private int activeShards;
  private boolean closed;
  private volatile Throwable failure;

  private record Pending(List<GenerationRequest> requests, CompletableFuture<List<Completion>> result) {}

  /** The model the group batches for. */
  Generator model() {
    return model;
  }

  BatchGroup(Generator model, SamplingParams sampling, long windowMillis, String name) {
    this.model = model;
    this.sampling = sampling;
    this.windowNanos = TimeUnit.MILLISECONDS.toNanos(windowMillis);
    this.thread = new Thread(this::loop, "whale-batch-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  synchronized void shardStarted() {
    activeShards++;
  }

  synchronized void shardFinished() {
    activeShards--;
    notifyAll();
  }

  int batches() {
    return batches.get();
  }

  /** The first model failure, or null: a model failure fails the whole run, as in-process. */
  Throwable failure() {
    return failure;
  }

  /** Blocks until the batch holding these requests has been generated. */
  List<Completion> generate(List<GenerationRequest> requests) throws InterruptedException {
    Pending p = new Pending(List.copyOf(requests), new CompletableFuture<>());
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("episode run is over");
      }
      queue.add(p);
      notifyAll();
    }
    try {
      return p.result.get();
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      throw c instanceof RuntimeException r ? r : new IllegalStateException(c);
    }
  }

  private void loop() {
    while (true) {
      List<Pending> batch;
      synchronized (this) {
        try {
          while (queue.isEmpty() && !closed) {
            wait();
          }
          if (closed) {
            break;
          }
          long deadline = System.nanoTime() + windowNanos;
          long left;
          while (!closed && queue.size() < activeShards && (left = deadline - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.timedWait(this, left);
          }
        } catch (InterruptedException e) {
          break;
        }
        batch = new ArrayList<>(queue);
        queue.clear();
      }
      List<GenerationRequest> all = new ArrayList<>();
      for (Pending p : batch) {
        all.addAll(p.requests);
      }
      try {
        batches.incrementAndGet();
        List<Completion> out = model.generate(all, sampling);
        if (out == null || out.size() != all.size()) {
          throw new IllegalStateException("model returned " + (out == null ? "null" : out.size())
              + " completions for " + all.size() + " requests");
        }
        int i = 0;
        for (Pending p : batch) {
          p.result.complete(List.copyOf(out.subList(i, i + p.requests.size())));
          i += p.requests.size();
        }
      } catch (Throwable t) {
        if (failure == null) {
          failure = t;
        }
        for (Pending p : batch) {
          p.result.completeExceptionally(new IllegalStateException("model failed: " + t, t));
        }
      }
    }
    synchronized (this) {
      for (Pending p : queue) {
        p.result.completeExceptionally(new IllegalStateException("episode run is over"));
      }
      queue.clear();
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    notifyAll();
  }
}
