package whale.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sandbox JVM's class path: the sandbox module's own jars, found in whale's lib/ layout. */
class SandboxClasspathTest {
  @TempDir Path dir;

  @Test
  void theBuildListsTheHarnessApiAndGrpcButNothingOfTheWorker() {
    List<String> listed = SandboxClasspath.listed();
    assertTrue(listed.stream().allMatch(e -> e.startsWith("lib/") && e.endsWith(".jar")), listed.toString());
    assertTrue(listed.stream().anyMatch(e -> e.startsWith("lib/whale-harness-api-")), listed.toString());
    assertTrue(listed.stream().anyMatch(e -> e.startsWith("lib/grpc-netty-shaded-")), listed.toString());
    for (String worker : List.of("lib/whale-model-0", "lib/whale-tasks-", "lib/whale-activities-", "lib/api-",
        "lib/pytorch-", "lib/temporal-", "lib/lucene-", "lib/whale-store-")) {
      assertTrue(listed.stream().noneMatch(e -> e.startsWith(worker)), worker + " in " + listed);
    }
  }

  @Test
  void inWhalesLayoutTheSandboxGetsItsOwnJarsOnly() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Path own = Files.createFile(lib.resolve("whale-sandbox-1.jar"));
    for (String e : SandboxClasspath.listed()) {
      Path p = dir.resolve(e);
      if (!Files.exists(p)) {
        Files.createFile(p);
      }
    }
    Files.createFile(lib.resolve("pytorch-native-cpu-2.7.1-linux-x86_64.jar")); // the worker's, never listed
    String cp = SandboxClasspath.narrow(own).orElseThrow();
    String[] entries = cp.split(File.pathSeparator);
    assertEquals(own.toString(), entries[0]);
    assertEquals(SandboxClasspath.listed().size() + 1, entries.length);
    assertFalse(cp.contains("pytorch"), cp);

    Files.delete(dir.resolve(SandboxClasspath.listed().get(0)));
    assertEquals(Optional.empty(), SandboxClasspath.narrow(own), "a missing jar: the worker's class path instead");
  }

  @Test
  void outsideTheLayoutTheWorkersClassPathIsKept() throws Exception {
    assertEquals(Optional.empty(), SandboxClasspath.narrow(dir.resolve("classes")));
    assertEquals(Optional.empty(), SandboxClasspath.narrow(Files.createFile(dir.resolve("whale-sandbox.jar"))));
    assertEquals(Optional.empty(), SandboxClasspath.narrow(null));
  }
}
