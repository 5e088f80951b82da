package whale.activities;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import whale.workflows.activities.EvalRequest;
import whale.workflows.activities.TaskRef;
import org.junit.jupiter.api.io.TempDir;
import whale.store.ArtifactStore;

class MemoTest {
  @TempDir Path dir;

  record Request(String name, long seed) {}

  record Result(String checkpointRef, double loss) {}

  @Test
  void anIdenticalRequestComputingInThisProcessIsJoinedNotComputedAgain() throws Exception {
    ArtifactStore store = new ArtifactStore(dir);
    AtomicInteger runs = new AtomicInteger();
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Request req = new Request("joined", 11);
    java.util.function.Supplier<Result> work = () -> {
      runs.incrementAndGet();
      started.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
      return new Result(store.putBytes("joined".getBytes()), 0.25);
    };
    long joinedBefore = WhaleMetrics.memoCounts().getOrDefault("rsft-step joined", 0L);
    var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      var first = pool.submit(() -> Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work));
      started.await();
      // a second store object on the same directory, as a second activity of the process has
      var second = pool.submit(() -> Memo.once(new ArtifactStore(dir), Memo.Kind.RSFT_STEP, req,
          Result.class, work));
      Thread.sleep(200); // the second is waiting now (it did not run the work: runs stays 1)
      assertEquals(1, runs.get());
      release.countDown();
      assertEquals(first.get(), second.get());
      assertEquals(1, runs.get(), "the identical request was joined");
      assertEquals(joinedBefore + 1, WhaleMetrics.memoCounts().get("rsft-step joined"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void modelWorkComputesOnAsManyCoresAsTheProcessHasWhateverItsQueue() throws Exception {
    ArtifactStore store = new ArtifactStore(dir);
    int before = Cores.count();
    Cores.set(1);
    java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
    java.util.function.Function<String, Result> work = name -> {
      most.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
      running.decrementAndGet();
      return new Result(store.putBytes(name.getBytes()), 0);
    };
    var pool = java.util.concurrent.Executors.newFixedThreadPool(3);
    try {
      // an RSFT step takes the core for its SFT (and per model call for its rollouts), an evaluation
      // per model call (Cores.gated), pretraining for the whole activity
      var step = pool.submit(() -> Memo.once(store, Memo.Kind.RSFT_STEP, new Request("a", 1),
          Result.class, () -> Cores.run(() -> work.apply("a"))));
      whale.model.Generator model = (requests, params) -> {
        work.apply("b");
        return java.util.List.of();
      };
      var eval = pool.submit(() -> Memo.once(store, Memo.Kind.EVALUATE, new Request("b", 1),
          Result.class, () -> {
            Cores.gated(model).generate(java.util.List.of(), new whale.model.SamplingParams(1.0, 0));
            return new Result(store.putBytes("b".getBytes()), 0);
          }));
      var base = pool.submit(() -> Memo.once(store, Memo.Kind.BASE_MODEL, new Request("c", 1),
          Result.class, () -> work.apply("c")));
      step.get();
      eval.get();
      base.get();
      assertEquals(1, most.get(), "one core: one model job at a time, across kinds");
    } finally {
      pool.shutdownNow();
      Cores.set(before);
    }
  }

  @Test
  void aJoinedRequestWhoseFirstFailedComputesItself() throws Exception {
    ArtifactStore store = new ArtifactStore(dir);
    AtomicInteger runs = new AtomicInteger();
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Request req = new Request("failed-first", 12);
    var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      var first = pool.submit(() -> Memo.once(store, Memo.Kind.EVALUATE, req, Result.class, () -> {
        runs.incrementAndGet();
        started.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        throw new IllegalStateException("the first attempt's sandbox died");
      }));
      started.await();
      var second = pool.submit(() -> Memo.once(store, Memo.Kind.EVALUATE, req, Result.class, () -> {
        runs.incrementAndGet();
        return new Result(store.putBytes("second".getBytes()), 0.5);
      }));
      Thread.sleep(200);
      release.countDown();
      var failed = org.junit.jupiter.api.Assertions.assertThrows(
          java.util.concurrent.ExecutionException.class, first::get);
      assertTrue(failed.getCause().getMessage().contains("sandbox died"));
      assertEquals(0.5, second.get().loss());
      assertEquals(2, runs.get());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aMemoWhoseArtifactIsCorruptOrUnreadableIsRecomputedNotTrusted() throws Exception {
    ArtifactStore store = new ArtifactStore(dir);
    byte[] checkpoint = "WHALEGPT weights ...".repeat(1000).getBytes();
    AtomicInteger runs = new AtomicInteger();
    Request req = new Request("step", 7);
    java.util.function.Supplier<Result> work = () -> {
      runs.incrementAndGet();
      return new Result(store.putBytes(checkpoint), 0.5);
    };

    Result first = Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work);
    assertEquals(first, Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work));
    assertEquals(1, runs.get(), "an intact memo is reused");

    // flip a byte of the checkpoint the memo names: the work runs again and restores it
    Path ckpt = store.path(first.checkpointRef());
    byte[] bad = Files.readAllBytes(ckpt);
    bad[100] ^= 1;
    Files.write(ckpt, bad);
    Result again = Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work);
    assertEquals(2, runs.get());
    assertEquals(first, again);
    assertArrayEquals(checkpoint, store.getBytes(again.checkpointRef()));

    // a deleted artifact, and a memo file that no longer parses: recomputed as well
    Files.delete(store.path(first.checkpointRef()));
    assertEquals(first, Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work));
    assertEquals(3, runs.get());
    try (var memos = Files.list(dir.resolve("memo/rsft-step"))) {
      Path memo = memos.findFirst().orElseThrow();
      Files.writeString(memo, "{\"checkpointRef\": ");
    }
    assertEquals(first, Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work));
    assertEquals(4, runs.get());
    assertEquals(first, Memo.once(store, Memo.Kind.RSFT_STEP, req, Result.class, work));
    assertEquals(4, runs.get(), "and the repaired memo is trusted again");
  }

  /**
   * Two schedules label the same test evaluation differently; a comparison's cells must still find
   * each other's result: the label is not part of the evaluation's memo key, everything else is.
   */
  @Test
  void evaluationsDifferingOnlyInTheirLabelShareOneMemo() {
    ArtifactStore store = new ArtifactStore(dir);
    TaskRef task = new TaskRef("math", 1234, 64, 16, 16);
    whale.workflows.activities.EpisodeSettings episodes =
        new whale.workflows.activities.EpisodeSettings(1.0, 0, 8, 60, null, null);
    EvalRequest whale = new EvalRequest(task, "sha256:" + "a".repeat(64), "sha256:" + "b".repeat(64),
        EvalRequest.Split.TEST, 8, 5, episodes, "round 1 weight end");
    EvalRequest weightOnly = new EvalRequest(task, whale.checkpointRef(), whale.harnessRef(), EvalRequest.Split.TEST,
        8, 5, episodes, "round 1 step 4");
    EvalRequest otherCheckpoint = new EvalRequest(task, "sha256:" + "c".repeat(64),
        whale.harnessRef(), EvalRequest.Split.TEST, 8, 5, episodes, "round 1 weight end");
    AtomicInteger runs = new AtomicInteger();
    java.util.function.Supplier<Result> work = () -> new Result("r" + runs.incrementAndGet(), 0);
    Result a = Memo.once(store, Memo.Kind.EVALUATE, EvalActivitiesImpl.memoKey(whale), Result.class, work);
    Result b = Memo.once(store, Memo.Kind.EVALUATE, EvalActivitiesImpl.memoKey(weightOnly), Result.class,
        work);
    assertEquals(a, b);
    assertEquals(1, runs.get(), "the same evaluation under another label is not run again");
    Memo.once(store, Memo.Kind.EVALUATE, EvalActivitiesImpl.memoKey(otherCheckpoint), Result.class, work);
    assertEquals(2, runs.get(), "another checkpoint is another evaluation");
  }

  @Test
  void versionOneKeysAreTheOriginalOnesAndEveryKindHasItsOwn() {
    String json = "{\"kind\":\"step\",\"n\":7}";
    // the key every store written before memo versions holds: sha256 of namespace, newline, request
    assertEquals(ArtifactStore.sha256Hex("rsft-step\n" + json), Memo.Kind.RSFT_STEP.key(json));
    java.util.Set<String> keys = new java.util.HashSet<>();
    for (Memo.Kind k : Memo.Kind.values()) {
      assertTrue(keys.add(k.key(json)), k + " shares a key with another kind");
    }
  }
}
