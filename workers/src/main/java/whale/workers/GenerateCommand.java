package whale.workers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import whale.activities.HfPolicy;
import whale.model.hf.Generate;
import whale.model.hf.HfModel;
import whale.model.hf.Sampling;
import whale.store.ArtifactStore;

/** One completion of a Hugging Face model directory or of a run's checkpoint, in this process. */
@Command(name = "generate", mixinStandardHelpOptions = true,
    description = "Complete a prompt with a Hugging Face model directory or a whale checkpoint "
        + "reference (a run's base or an RSFT step, adapters applied); temperature 0 is greedy.")
public class GenerateCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--model", required = true,
      description = "Model directory, or a checkpoint reference sha256:... in the artifact store")
  String model;

  @Option(names = "--prompt", required = true, description = "The prompt text")
  String prompt;

  @Option(names = "--max-new-tokens", defaultValue = "64", description = "Default: ${DEFAULT-VALUE}")
  int maxNewTokens;

  @Option(names = "--temperature", defaultValue = "0", description = "Default: ${DEFAULT-VALUE}")
  double temperature;

  @Option(names = "--top-k", defaultValue = "0", description = "0: no limit (default)")
  int topK;

  @Option(names = "--top-p", defaultValue = "1", description = "Default: ${DEFAULT-VALUE}")
  double topP;

  @Option(names = "--seed", defaultValue = "0", description = "Default: ${DEFAULT-VALUE}")
  long seed;

  @Option(names = "--json", description = "Print {\"text\", \"tokens\", \"promptTokens\"}")
  boolean json;

  @Option(names = "--dtype", defaultValue = "float32", description = "A model directory's base "
      + "weights: float32 (default) or float16 (a checkpoint reference keeps its own)")
  String dtype;

  @Option(names = "--device", defaultValue = "cpu", description = "A model directory's device: cpu "
      + "(default) or cuda (a checkpoint reference keeps its own)")
  String device;

  @Mixin Artifacts artifacts = new Artifacts();

  @Override
  public Integer call() throws Exception {
    if (maxNewTokens < 0) {
      throw new ParameterException(spec.commandLine(),
          "--max-new-tokens must be >= 0, got " + maxNewTokens);
    }
    Sampling sampling;
    try {
      sampling = new Sampling(temperature, topK, topP);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    try (HfModel m = open()) {
      spec.commandLine().getOut().println(
          Generate.complete(m, prompt, maxNewTokens, sampling, seed, json));
      spec.commandLine().getOut().flush();
    }
    return 0;
  }

  private HfModel open() throws Exception {
    if (model.startsWith("sha256:")) {
      return HfPolicy.open(artifacts.open(), model);
    }
    Path dir = Path.of(model);
    if (!Files.isDirectory(dir)) {
      throw new ParameterException(spec.commandLine(), "--model: " + model
          + " is neither a directory nor a checkpoint reference (sha256:...)");
    }
    HfModel.Placement placement;
    try {
      placement = HfModel.Placement.of(dtype, device);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage().replace("model.", "--"));
    }
    HfPolicy.checkDirectory(dir);
    // no stop strings: as transformers' generate
    return HfModel.load(dir, List.of(), placement);
  }
}
