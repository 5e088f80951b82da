package whale.model.hf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * {@code generate --model DIR --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-k K]
 * [--top-p P] [--seed S] [--json]}: one completion of a Hugging Face model directory, ending at EOS
 * or after N tokens, as transformers' generate would give it (temperature 0 is greedy). With
 * {@code --json}: {"text", "tokens" (the completion's ids, EOS included when reached),
 * "promptTokens" (the prompt's ids)}. The core of {@code whale generate}; the CLI wires it in.
 */
public final class Generate {
  static final String USAGE = "usage: generate --model DIR --prompt TEXT [--max-new-tokens N]"
      + " [--temperature T] [--top-k K] [--top-p P] [--seed S] [--json]";

  /** Parsed arguments. */
  record Args(Path model, String prompt, int maxNewTokens, Sampling sampling, long seed,
      boolean json) {}

  private Generate() {}

  public static void main(String[] argv) {
    try {
      run(argv, System.out);
    } catch (IllegalArgumentException | IOException e) {
      System.err.println("generate: " + e.getMessage());
      System.exit(2);
    }
  }

  static Args parse(String[] argv) {
    Path model = null;
    String prompt = null;
    int maxNew = 64;
    double temperature = 0;
    int topK = 0;
    double topP = 1;
    long seed = 0;
    boolean json = false;
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (a.equals("--json")) {
        json = true;
        continue;
      }
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("option " + a + " needs a value; " + USAGE);
      }
      String v = argv[++i];
      try {
        switch (a) {
          case "--model" -> model = Path.of(v);
          case "--prompt" -> prompt = v;
          case "--max-new-tokens" -> maxNew = Integer.parseInt(v);
          case "--temperature" -> temperature = Double.parseDouble(v);
          case "--top-k" -> topK = Integer.parseInt(v);
          case "--top-p" -> topP = Double.parseDouble(v);
          case "--seed" -> seed = Long.parseLong(v);
          default -> throw new IllegalArgumentException("unknown option " + a + "; " + USAGE);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("option " + a + ": not a number: " + v);
      }
    }
    if (model == null || prompt == null) {
      throw new IllegalArgumentException((model == null ? "--model" : "--prompt")
          + " is required; " + USAGE);
    }
    if (maxNew < 0) {
      throw new IllegalArgumentException("option --max-new-tokens must be >= 0: " + maxNew);
    }
    if (!Files.isDirectory(model)) {
      throw new IllegalArgumentException("option --model: " + model + " is not a directory");
    }
    return new Args(model, prompt, maxNew, new Sampling(temperature, topK, topP), seed, json);
  }

  static void run(String[] argv, PrintStream out) throws IOException {
    Args a = parse(argv);
    try (HfModel m = HfModel.load(a.model(), List.of())) {
      out.println(complete(m, a.prompt(), a.maxNewTokens(), a.sampling(), a.seed(), a.json()));
    }
  }

  /**
   * One completion of {@code prompt} by a loaded model (a directory, or a whale checkpoint with its
   * adapters): the text, or with {@code json} the JSON object described above.
   */
  public static String complete(HfModel m, String prompt, int maxNewTokens, Sampling sampling,
      long seed, boolean json) throws IOException {
    int[] promptIds = m.promptIds(prompt);
    int room = m.decoder().config().maxPositions() - promptIds.length;
    if (room < maxNewTokens) {
      throw new IllegalArgumentException("the prompt's " + promptIds.length + " tokens + "
          + maxNewTokens + " new tokens exceed the model's max_position_embeddings "
          + m.decoder().config().maxPositions());
    }
    int[] ids = m.generateIds(List.of(new KvSampler.Row(promptIds, seed, maxNewTokens)),
        sampling)[0];
    int n = ids.length > 0 && m.tokenizer().eosIds().contains(ids[ids.length - 1])
        ? ids.length - 1 : ids.length;
    String text = m.tokenizer().decode(Arrays.copyOf(ids, n));
    if (!json) {
      return text;
    }
    ObjectMapper mapper = new ObjectMapper();
    ObjectNode o = mapper.createObjectNode();
    o.put("text", text);
    var tokens = o.putArray("tokens");
    Arrays.stream(ids).forEach(tokens::add);
    var promptTokens = o.putArray("promptTokens");
    Arrays.stream(promptIds).forEach(promptTokens::add);
    return mapper.writeValueAsString(o);
  }
}
