package whale.workers.e2e;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Separate network hosts on one machine, as root: one Linux network namespace per host, each with
 * one veth link ({@code eth0}) to a bridge that lives in a namespace of its own (the switch). No
 * namespace has a route beyond the subnet, and nothing is added to the root namespace, so every
 * packet stays between the hosts. Every namespace is named PREFIX-something: {@link #create}
 * first removes what a crashed earlier run left under that prefix, {@link #close} removes all.
 * Failing to build the network fails the test: CI runs as root and must not skip this.
 */
public final class Network implements AutoCloseable {
  private final String prefix;
  private final String subnet;
  private final String switchNs;
  private final List<String> namespaces = new ArrayList<>();

  private Network(String prefix, String subnet) {
    this.prefix = prefix;
    this.subnet = subnet;
    this.switchNs = prefix + "switch";
  }

  /** A network of no hosts yet: namespaces {@code prefix*}, addresses {@code subnet.N/24}. */
  public static Network create(String prefix, String subnet) {
    removeLeftovers(prefix);
    Network n = new Network(prefix, subnet);
    n.addNamespace(n.switchNs);
    ip("-n", n.switchNs, "link", "add", "br0", "type", "bridge");
    ip("-n", n.switchNs, "link", "set", "br0", "up");
    return n;
  }

  /** A new host {@code prefix+name} at {@code subnet.octet}, linked to the switch. */
  public Host host(String name, int octet) {
    String ns = prefix + name;
    String port = "v-" + name; // the switch's end; interface names stop at 15 characters
    if (port.length() > 15) {
      throw new IllegalArgumentException("host name too long for an interface name: " + name);
    }
    addNamespace(ns);
    // both ends are created right inside their namespaces: none passes through the root namespace
    ip("link", "add", port, "netns", switchNs, "type", "veth", "peer", "name", "eth0", "netns", ns);
    ip("-n", switchNs, "link", "set", port, "master", "br0");
    ip("-n", switchNs, "link", "set", port, "up");
    ip("-n", ns, "addr", "add", subnet + "." + octet + "/24", "dev", "eth0");
    ip("-n", ns, "link", "set", "eth0", "up");
    return new Host(ns, subnet + "." + octet);
  }

  /** Pulls the host's cable: its only link goes down, its processes keep running. */
  public void cut(Host h) {
    ip("-n", h.namespace, "link", "set", "eth0", "down");
  }

  /** Plugs it back: the link up again, with the same address. */
  public void restore(Host h) {
    ip("-n", h.namespace, "link", "set", "eth0", "up");
  }

  private void addNamespace(String ns) {
    ip("netns", "add", ns);
    namespaces.add(ns);
    ip("-n", ns, "link", "set", "lo", "up");
  }

  /** Removes every namespace of this network, killing whatever still runs in one. */
  @Override
  public void close() {
    List<String> reversed = new ArrayList<>(namespaces);
    java.util.Collections.reverse(reversed); // the hosts, then the switch
    for (String ns : reversed) {
      remove(ns);
    }
    namespaces.clear();
  }

  /** What a crashed run left: every namespace named {@code prefix*}, and its processes. */
  public static void removeLeftovers(String prefix) {
    for (String line : ip("netns", "list").split("\n")) {
      String ns = line.trim().split("\\s+")[0];
      if (!ns.isEmpty() && ns.startsWith(prefix)) {
        System.out.println("removing leftover network namespace " + ns);
        remove(ns);
      }
    }
  }

  private static void remove(String ns) {
    // a process left in a namespace keeps it (and its veth) alive after `ip netns del`; these are
    // the test's own processes (workers, servers) that a failure left running
    for (String pid : run(List.of("ip", "netns", "pids", ns), false).split("\\s+")) {
      if (!pid.isBlank()) {
        ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(p -> {
          p.destroyForcibly();
          p.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(e -> p).join();
        });
      }
    }
    run(List.of("ip", "netns", "del", ns), false);
  }

  static String ip(String... args) {
    List<String> cmd = new ArrayList<>(List.of("ip"));
    cmd.addAll(List.of(args));
    return run(cmd, true);
  }

  private static String run(List<String> cmd, boolean check) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return fail("timed out: " + String.join(" ", cmd));
      }
      if (check && p.exitValue() != 0) {
        return fail("cannot build the test network (root and iproute2 are required): "
            + String.join(" ", cmd) + " exited " + p.exitValue() + ": " + out.trim());
      }
      return out;
    } catch (IOException e) {
      return fail("cannot run " + String.join(" ", cmd) + " (iproute2 is required)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
