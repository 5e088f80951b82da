package whale.workers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import whale.model.gguf.GgufImporter;
import whale.model.hf.HfModel;

/** A llama.cpp GGUF (Llama architecture) as a Hugging Face model directory. */
@Command(name = "import-gguf", mixinStandardHelpOptions = true,
    description = "Import a llama.cpp GGUF of a Llama-architecture model (byte-level BPE "
        + "vocabulary) as a Hugging Face model directory that whale and transformers load: "
        + "weights dequantized to float32 (or float16), config, tokenizer and chat template.")
public class ImportGgufCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "FILE.gguf", description = "The GGUF file")
  Path gguf;

  @Option(names = "--out", required = true, description = "Directory to create")
  Path out;

  @Option(names = "--dtype", defaultValue = "float32",
      description = "Weights written as float32 (default) or float16")
  String dtype;

  @Option(names = "--force", description = "Replace --out if it exists")
  boolean force;

  @Override
  public Integer call() throws Exception {
    HfModel.Placement.Dtype weights;
    try {
      weights = HfModel.Placement.Dtype.of(dtype);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage().replace("model.", "--"));
    }
    if (!Files.isRegularFile(gguf)) {
      throw new ParameterException(spec.commandLine(), gguf + ": no such file");
    }
    if (Files.exists(out) && !force) {
      throw new ParameterException(spec.commandLine(), "--out: " + out
          + " already exists (pass --force to replace it)");
    }
    GgufImporter.Result r = GgufImporter.importFile(gguf, out, weights, force);
    spec.commandLine().getOut().printf(Locale.ROOT,
        "imported %s to %s: %d tensors, %,d parameters (%s), %d layers, vocabulary %d, %s embeddings;"
            + " %.1f s%n", gguf, r.out(), r.tensors(), r.parameters(), dtype, r.config().layers(),
        r.config().vocabSize(), r.config().tieWordEmbeddings() ? "tied" : "untied", r.seconds());
    spec.commandLine().getOut().flush();
    return 0;
  }
}
