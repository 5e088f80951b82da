package whale.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Run pins on S3 without a shared file lock: two runs sharing one bucket (each through its own
 * client and cache, as on two machines) pin and release the same checkpoints at once.
 */
class S3PinsTest {
  static S3ProxyProcess s3;

  @BeforeAll
  static void startServer(@TempDir Path dir) throws IOException {
    s3 = new S3ProxyProcess(dir, "pins-test");
  }

  @AfterAll
  static void stopServer() throws InterruptedException {
    s3.close();
  }

  /**
   * Each run, 60 times: holds a checkpoint for its workflow (making it again when the other run's
   * retention deleted it first, as the weight activity does), then retains it and releases the one
   * it held before, which the other run may hold. After every retain, everything the run's pin
   * names must still be stored; at the end both pins' checkpoints are. Without the lease a release
   * reads the other run's pin before that run's hold lands, and deletes what it holds: with the
   * lease taken out, one of two runs of this test lost 3 held checkpoints (measured); with it,
   * five runs lost none.
   */
  @Test
  void twoRunsReleasingAndPinningTheSameCheckpointsNeverLoseOneTheOtherHolds(@TempDir Path a,
      @TempDir Path b) throws Exception {
    String loc = "s3://pins-test/shared";
    List<String> lost = new CopyOnWriteArrayList<>();
    List<Integer> remade = new CopyOnWriteArrayList<>();
    Thread[] runs = new Thread[2];
    ArtifactStore[] stores = {
        new ArtifactStore(a, s3.remote(loc), 0), new ArtifactStore(b, s3.remote(loc), 0)};
    for (int r = 0; r < 2; r++) {
      ArtifactStore store = stores[r];
      String run = "run-" + r;
      Random rnd = new Random(r);
      runs[r] = new Thread(() -> {
        Pins pins = new Pins(store);
        String previous = null;
        int made = 0;
        for (int i = 0; i < 60; i++) {
          String content = "checkpoint " + rnd.nextInt(3); // three checkpoints both runs make
          String ref = store.putString(content);
          while (!pins.hold(run + "/wf", ref)) {
            store.putString(content); // deleted before the hold: made again
            made++;
          }
          List<String> released = previous == null || previous.equals(ref) ? List.of()
              : List.of(previous);
          pins.retain(run, run + "/wf", List.of(ref), released, x -> { });
          for (String held : pins.held(run)) {
            if (!store.stored(held)) {
              lost.add(run + " step " + i + " lost " + held);
            }
          }
          previous = ref;
        }
        remade.add(made);
      }, run);
    }
    for (Thread t : runs) {
      t.start();
    }
    for (Thread t : runs) {
      t.join(300_000);
    }
    assertEquals(List.of(), lost);
    Pins pins = new Pins(stores[0]);
    Set<String> pinned = new TreeSet<>(pins.pinnedByAll());
    Set<String> last = new TreeSet<>(pins.held("run-0"));
    last.addAll(pins.held("run-1"));
    assertEquals(1, pins.held("run-0").size());
    assertEquals(1, pins.held("run-1").size());
    assertEquals(last, pinned, "each run's pin holds its last checkpoint");
    for (String ref : pinned) {
      assertTrue(stores[1].stored(ref), ref + " is pinned and stored");
    }
    System.out.println("pins on S3: checkpoints made again after a deletion: " + remade);
  }

  @Test
  void aLeaseWhoseHolderDiedIsTakenOverAfterItExpires() {
    Remote remote = s3.remote("s3://pins-test/lease");
    remote.put("pins/.lock", ("{\"holder\":\"crashed\",\"expires\":"
        + (System.currentTimeMillis() - 1) + "}").getBytes());
    long t0 = System.nanoTime();
    try (RemoteLease lease = RemoteLease.acquire(remote, "pins/.lock")) {
      assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "taken over without waiting");
      assertTrue(new String(remote.get("pins/.lock").orElseThrow().bytes()).contains("expires"));
      assertTrue(!new String(remote.get("pins/.lock").orElseThrow().bytes()).contains("crashed"));
    }
    assertTrue(remote.get("pins/.lock").isEmpty(), "given back");
    ArrayList<String> none = new ArrayList<>(remote.list("pins/"));
    assertEquals(List.of(), none);
  }
}
