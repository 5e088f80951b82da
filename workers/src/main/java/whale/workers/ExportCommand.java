package whale.workers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import whale.activities.HfPolicy;
import whale.store.ArtifactStore;

/** Writes a Hugging Face RSFT checkpoint out for transformers, peft and vLLM. */
@Command(name = "export", mixinStandardHelpOptions = true,
    description = "Export a Hugging Face RSFT step checkpoint: a LoRA step as a PEFT adapter "
        + "directory (with --merge: a model directory with the adapters merged), a full step as "
        + "a model directory.")
public class ExportCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(index = "0", description = "Checkpoint reference sha256:... (e.g. a run's result)")
  String checkpointRef;

  @Option(names = "--out", required = true, description = "Directory to write (must not exist "
      + "or be empty)")
  Path out;

  @Option(names = "--merge", description = "Merge LoRA adapters into the weights")
  boolean merge;

  @Mixin Artifacts artifacts = new Artifacts();

  @Override
  public Integer call() throws Exception {
    if (Files.exists(out) && (!Files.isDirectory(out) || !isEmpty(out))) {
      throw new ParameterException(spec.commandLine(), "--out: " + out
          + " exists and is not an empty directory (nothing is overwritten)");
    }
    HfPolicy.export(artifacts.open(), checkpointRef, out, merge);
    spec.commandLine().getOut().println("exported " + checkpointRef + " to " + out
        + (merge ? " (adapters merged)" : ""));
    spec.commandLine().getOut().flush();
    return 0;
  }

  private static boolean isEmpty(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }
}
