package whale.workers.e2e;

import java.util.ArrayList;
import java.util.List;

/**
 * Where an e2e process runs: this machine as the tests always ran them ({@link #LOCAL}, loopback),
 * or a network namespace of a {@link Network} standing for a separate host, whose commands are
 * started through {@code ip netns exec NS} (which execs, so the process started is the command
 * itself: its pid and kill -9 are the command's).
 */
public final class Host {
  public static final Host LOCAL = new Host(null, "127.0.0.1");

  /** The namespace's name, null for {@link #LOCAL}. */
  public final String namespace;
  /** The address the host's servers bind to and the others reach it at. */
  public final String ip;

  Host(String namespace, String ip) {
    this.namespace = namespace;
    this.ip = ip;
  }

  public boolean local() {
    return namespace == null;
  }

  /** {@code cmd} as run on this host. */
  public List<String> command(List<String> cmd) {
    if (local()) {
      return cmd;
    }
    List<String> out = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
    out.addAll(cmd);
    return out;
  }

  @Override
  public String toString() {
    return local() ? "local" : namespace + " (" + ip + ")";
  }
}
