package whale.sandbox;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Semaphore;

/**
 * A pool of sandbox processes, reused across episode runs. At most {@code size} are in use at once;
 * one that died or was killed is dropped on release and a fresh one is started on the next acquire.
 */
public final class SandboxPool implements AutoCloseable {
  private final int size;
  private final String classpath;
  private final int heapMb;
  private final Semaphore permits;
  private final Deque<SandboxProcess> idle = new ArrayDeque<>();
  private final List<SandboxProcess> all = new ArrayList<>();
  private int started;
  private boolean closed;

  public SandboxPool(int size, String classpath, int heapMb) {
    if (size < 1) {
      throw new IllegalArgumentException("pool size must be >= 1");
    }
    this.size = size;
    this.classpath = classpath;
    this.heapMb = heapMb;
    this.permits = new Semaphore(size, true);
  }

  /** A pool on {@link SandboxClasspath#forThisJvm} (the sandbox's own jars when whale runs from its layout). */
  public static SandboxPool forThisJvm(int size, int heapMb) {
    return new SandboxPool(size, SandboxClasspath.forThisJvm(), heapMb);
  }

  /** The class path its sandbox JVMs start with. */
  public String classpath() {
    return classpath;
  }

  public int size() {
    return size;
  }

  /** The heap of each sandbox (MiB): also the memory a compilation may use. */
  public int heapMb() {
    return heapMb;
  }

  /** Processes started so far (replacements included). */
  public synchronized int started() {
    return started;
  }

  public SandboxProcess acquire() throws InterruptedException {
    permits.acquire();
    try {
      synchronized (this) {
        if (closed) {
          throw new IllegalStateException("sandbox pool closed");
        }
        while (!idle.isEmpty()) {
          SandboxProcess s = idle.pop();
          if (s.alive()) {
            return s;
          }
          all.remove(s);
        }
      }
      SandboxProcess s = SandboxProcess.start(classpath, heapMb, 60_000);
      synchronized (this) {
        started++;
        all.add(s);
        if (closed) {
          s.close();
          throw new IllegalStateException("sandbox pool closed");
        }
      }
      return s;
    } catch (RuntimeException | Error e) {
      permits.release();
      throw e;
    }
  }

  public void release(SandboxProcess s) {
    synchronized (this) {
      if (s.alive() && !closed) {
        idle.push(s);
      } else {
        s.kill("released dead");
        all.remove(s);
      }
    }
    permits.release();
  }

  /**
   * Stops every sandbox no run holds, giving its memory (about 0.2 GB each) back to the system; the
   * next acquire starts a fresh one. For a worker about to need that memory itself (a full
   * fine-tuning step). Returns how many were stopped.
   */
  public synchronized int stopIdle() {
    int n = idle.size();
    for (SandboxProcess s : idle) {
      s.close();
      all.remove(s);
    }
    idle.clear();
    return n;
  }

  /** Pids of the live processes (tests). */
  public synchronized List<Long> pids() {
    return all.stream().filter(SandboxProcess::alive).map(SandboxProcess::pid).toList();
  }

  @Override
  public synchronized void close() {
    closed = true;
    for (SandboxProcess s : all) {
      s.close();
    }
    all.clear();
    idle.clear();
  }
}
