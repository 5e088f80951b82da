package whale.sandbox;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import whale.proto.sandbox.v1.SandboxServiceGrpc;

/**
 * One sandbox JVM: {@code java -Xmx<heap>m -XX:+ExitOnOutOfMemoryError -cp <cp> whale.sandbox.SandboxMain 0},
 * its gRPC channel, and the tail of its output (bounded; the rest is drained and dropped).
 *
 * <p>It starts with an empty environment, so no variable of the worker (API keys, TZ, LANG, proxies)
 * can reach harness code whatever the allow-list lets through, and with a fixed locale (en_US), time
 * zone (UTC) and default charset (UTF-8), so episodes do not depend on the worker's settings.
 */
public final class SandboxProcess implements AutoCloseable {
  // The worker's metrics live above this module: it says here what to do on a kill.
  private static volatile Runnable onKill = () -> {};

  /** Runs {@code r} whenever a sandbox process is killed (crash, hang, limit; not a pool's close). */
  public static void onKill(Runnable r) {
    onKill = r;
  }

  static final int TAIL_CHARS = 4000;

  private final Process process;
  private final ManagedChannel channel;
  private final StringBuilder tail;
  private volatile String killReason;

  private SandboxProcess(Process process, int port, StringBuilder tail) {
    this.process = process;
    this.tail = tail;
    this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
        .maxInboundMessageSize(SandboxMain.MAX_MESSAGE).build();
  }

  /** The fixed settings every sandbox JVM runs with. */
  static final List<String> FIXED_SETTINGS = List.of("-Duser.timezone=UTC", "-Duser.language=en",
      "-Duser.country=US", "-Dfile.encoding=UTF-8");

  static List<String> command(String classpath, int heapMb) {
    return command(classpath, heapMb, SandboxMain.class.getName());
  }

  static List<String> command(String classpath, int heapMb, String mainClass) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx" + heapMb + "m");
    cmd.add("-Xss1m");
    cmd.add("-XX:+ExitOnOutOfMemoryError");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-Xshare:auto");
    cmd.addAll(FIXED_SETTINGS);
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(mainClass);
    cmd.add("0");
    return cmd;
  }

  /** Starts a sandbox and waits (up to {@code startTimeoutMillis}) for it to listen. */
  static SandboxProcess start(String classpath, int heapMb, long startTimeoutMillis) {
    return start(command(classpath, heapMb), startTimeoutMillis);
  }

  /** Starts {@code command} (a {@link #command}) with an empty environment. */
  static SandboxProcess start(List<String> command, long startTimeoutMillis) {
    Process p;
    try {
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.PIPE);
      pb.environment().clear(); // the JVM needs none of them: java is started by its full path
      p = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start a sandbox process", e);
    }
    CompletableFuture<Integer> port = new CompletableFuture<>();
    StringBuilder early = new StringBuilder();
    // collected from the port line on, before this object exists (nothing is lost while it is built)
    StringBuilder tail = new StringBuilder();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
          StandardCharsets.UTF_8))) {
        char[] buf = new char[4096];
        String line;
        while (!port.isDone() && (line = r.readLine()) != null) {
          if (line.startsWith(SandboxMain.PORT_LINE)) {
            port.complete(Integer.parseInt(line.substring(SandboxMain.PORT_LINE.length()).trim()));
          } else if (early.length() < TAIL_CHARS) {
            early.append(line).append('\n');
          }
        }
        port.completeExceptionally(new IllegalStateException("sandbox exited before listening: " + early));
        int n;
        while ((n = r.read(buf)) >= 0) {
          appendTail(tail, buf, n);
        }
      } catch (IOException | RuntimeException e) {
        port.completeExceptionally(e);
      }
    }, "whale-sandbox-out-" + p.pid());
    reader.setDaemon(true);
    reader.start();
    try {
      return new SandboxProcess(p, port.get(startTimeoutMillis, TimeUnit.MILLISECONDS), tail);
    } catch (Exception e) {
      p.destroyForcibly();
      throw new IllegalStateException("sandbox did not start: " + e, e);
    }
  }

  private static void appendTail(StringBuilder tail, char[] buf, int n) {
    synchronized (tail) {
      tail.append(buf, 0, n);
      if (tail.length() > TAIL_CHARS) {
        tail.delete(0, tail.length() - TAIL_CHARS);
      }
    }
  }

  public String outputTail() {
    synchronized (tail) {
      return tail.toString();
    }
  }

  SandboxServiceGrpc.SandboxServiceStub stub() {
    return SandboxServiceGrpc.newStub(channel);
  }

  SandboxServiceGrpc.SandboxServiceBlockingStub blockingStub() {
    return SandboxServiceGrpc.newBlockingStub(channel);
  }

  public long pid() {
    return process.pid();
  }

  public boolean alive() {
    return process.isAlive() && killReason == null;
  }

  /** Why this sandbox is gone: killed by the worker (with the reason) or exited by itself. */
  String deathReason() {
    if (killReason != null) {
      return killReason;
    }
    if (!process.isAlive()) {
      String t = outputTail().strip();
      return "sandbox process exited with code " + process.exitValue()
          + (t.isEmpty() ? "" : " (" + lastLine(t) + ")");
    }
    return null;
  }

  /** Waits briefly for the process to have exited on its own, then tells why it died (or null). */
  String awaitDeath(long millis) {
    try {
      process.waitFor(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return deathReason();
  }

  private static String lastLine(String s) {
    int i = s.lastIndexOf('\n');
    String l = i < 0 ? s : s.substring(i + 1);
    return l.length() > 300 ? l.substring(0, 300) : l;
  }

  /** Kills the process (and anything it started) with a reason, kept for the traces. */
  void kill(String reason) {
    if (killReason == null) {
      killReason = reason;
      if (!reason.equals("sandbox pool closed")) {
        onKill.run();
      }
    }
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    channel.shutdownNow();
  }

  @Override
  public void close() {
    kill("sandbox pool closed");
  }
}
