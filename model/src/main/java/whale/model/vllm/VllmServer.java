package whale.model.vllm;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A {@code vllm serve} child process that whale starts, supervises and stops: one served base model
 * with runtime LoRA loading, on a loopback port, its output in a log file. It is restarted when it
 * dies (a crash, an OOM kill) until {@link #close}; a caller that sees its requests fail meanwhile
 * retries ({@link VllmGenerator}) and reloads its adapter (a restarted server has none).
 *
 * <p>The settings are those that served SmolLM2 on 2 CPU cores: one OpenMP thread (two contended
 * with the JVM and made a request take 26 s), 1 GiB of KV cache, eager mode (no graph capture on
 * CPU), float32 so that log-probabilities can be checked against whale's own.
 */
public final class VllmServer implements AutoCloseable {
  /**
   * How to start it.
   *
   * @param executable the {@code vllm} command (a venv's bin/vllm)
   * @param modelDir the Hugging Face model directory it serves
   * @param servedName the name requests use for the base
   * @param port 0: a free loopback port
   */
  public record Settings(Path executable, Path modelDir, String servedName, int port, String dtype,
      int maxModelLen, int maxLoraRank, int maxLoras, int maxNumSeqs, Duration startTimeout,
      Path log) {
    public Settings {
      if (!Files.isExecutable(executable)) {
        throw new IllegalArgumentException("no vLLM at " + executable + " (install it with "
            + "deploy/vllm/install-cpu.sh, or set WHALE_VLLM to its bin/vllm)");
      }
    }

    /** The CPU settings the tests and the CI machine use. */
    public static Settings cpu(Path executable, Path modelDir, String servedName, Path log) {
      return new Settings(executable, modelDir, servedName, 0, "float32", 1024, 16, 2, 8,
          Duration.ofMinutes(5), log);
    }
  }

  private final Settings settings;
  private final int port;
  private final VllmClient client;
  private Process process;
  private volatile boolean closing;
  private int starts;

  private VllmServer(Settings settings, int port) {
    this.settings = settings;
    this.port = port;
    this.client = new VllmClient(url(), Duration.ofMinutes(2));
  }

  /** Starts the server and waits until it answers; a server that exits first fails with its log's end. */
  public static VllmServer start(Settings settings) throws IOException {
    VllmServer s = new VllmServer(settings, settings.port() > 0 ? settings.port() : freePort());
    try {
      s.launch();
      s.awaitReady();
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
    Thread watcher = new Thread(s::supervise, "whale-vllm-supervisor-" + s.port);
    watcher.setDaemon(true);
    watcher.start();
    return s;
  }

  /** The default location of the vLLM command: {@code WHALE_VLLM}, else whale's venv in the cache. */
  public static Path defaultExecutable() {
    String env = System.getenv("WHALE_VLLM");
    if (env != null && !env.isBlank()) {
      return Path.of(env);
    }
    return Path.of(System.getProperty("user.home"), ".cache", "whale", "vllm-venv", "bin", "vllm");
  }

  public String url() {
    return "http://127.0.0.1:" + port;
  }

  public VllmClient client() {
    return client;
  }

  public Settings settings() {
    return settings;
  }

  /** How many times the process was started (1 + restarts after it died). */
  public synchronized int starts() {
    return starts;
  }

  /** The running process's pid, or -1 while it is restarting. */
  public synchronized long pid() {
    return process != null && process.isAlive() ? process.pid() : -1;
  }

  private synchronized void launch() throws IOException {
    List<String> cmd = new ArrayList<>(List.of(settings.executable().toString(), "serve",
        settings.modelDir().toString(), "--served-model-name", settings.servedName(),
        "--host", "127.0.0.1", "--port", Integer.toString(port),
        "--dtype", settings.dtype(), "--max-model-len", Integer.toString(settings.maxModelLen()),
        "--enforce-eager", "--enable-lora", "--max-lora-rank", Integer.toString(settings.maxLoraRank()),
        "--max-loras", Integer.toString(settings.maxLoras()),
        "--max-num-seqs", Integer.toString(settings.maxNumSeqs())));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(settings.log().toFile()));
    Map<String, String> env = pb.environment();
    env.put("HF_HUB_OFFLINE", "1");
    env.put("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "True");
    env.putIfAbsent("VLLM_CPU_KVCACHE_SPACE", "1");
    env.putIfAbsent("VLLM_CPU_OMP_THREADS_BIND", "nobind");
    env.putIfAbsent("OMP_NUM_THREADS", "1");
    env.put("VLLM_NO_USAGE_STATS", "1");
    env.put("DO_NOT_TRACK", "1");
    Files.createDirectories(settings.log().toAbsolutePath().getParent());
    Files.writeString(settings.log(), "# whale: " + String.join(" ", cmd) + "\n",
        StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    process = pb.start();
    starts++;
  }

  private void awaitReady() throws IOException {
    long deadline = System.nanoTime() + settings.startTimeout().toNanos();
    Process p;
    synchronized (this) {
      p = process;
    }
    while (!client.healthy()) {
      if (!p.isAlive()) {
        throw new IOException("vLLM exited with status " + p.exitValue() + " while starting on "
            + url() + "; the end of " + settings.log() + ":\n" + tail(settings.log(), 20));
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("vLLM did not answer on " + url() + " within "
            + settings.startTimeout().toSeconds() + " s; the end of " + settings.log() + ":\n"
            + tail(settings.log(), 20));
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for vLLM on " + url(), e);
      }
    }
  }

  /** Restarts the process whenever it dies, until closed. */
  private void supervise() {
    while (!closing) {
      Process p;
      synchronized (this) {
        p = process;
      }
      try {
        p.waitFor();
      } catch (InterruptedException e) {
        return;
      }
      if (closing) {
        return;
      }
      killTree(p); // its engine core may outlive the API process
      try {
        launch();
        awaitReady();
      } catch (IOException e) {
        if (closing) {
          return;
        }
        System.err.println("whale: vLLM on " + url() + " failed to restart: " + e.getMessage());
        try {
          Thread.sleep(5000);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  /** Kills the server (and the engine process it forked), as a crash would; the supervisor restarts it. */
  public void kill() {
    Process p;
    synchronized (this) {
      p = process;
    }
    if (p != null) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  /** Waits until a restarted server answers again. */
  public void awaitRestarted(int startsAtLeast, Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (starts() < startsAtLeast || !client.healthy()) {
      if (System.nanoTime() > deadline) {
        throw new IOException("vLLM on " + url() + " did not come back within " + timeout.toSeconds() + " s");
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted", e);
      }
    }
  }

  @Override
  public void close() {
    closing = true;
    Process p;
    synchronized (this) {
      p = process;
    }
    if (p != null) {
      killTree(p);
    }
  }

  private static void killTree(Process p) {
    List<ProcessHandle> children = p.descendants().toList();
    p.destroy(); // SIGTERM: uvicorn shuts its engine down
    try {
      if (!p.waitFor(15, java.util.concurrent.TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    children.forEach(ProcessHandle::destroyForcibly);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(cannot read the log: " + e.getMessage() + ")";
    }
  }
}
