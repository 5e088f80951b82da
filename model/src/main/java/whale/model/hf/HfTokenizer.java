package whale.model.hf;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A model directory's {@code tokenizer.json} through DJL's Rust tokenizers binding, with the special
 * token ids resolved as transformers resolves them for {@code generate}:
 *
 * <ul>
 *   <li>EOS: {@code generation_config.json}'s {@code eos_token_id} (an id or a list), else
 *       {@code config.json}'s; only when neither names one, the tokenizer's {@code eos_token}
 *       (tokenizer_config.json) looked up in tokenizer.json;
 *   <li>pad: the same chain for {@code pad_token_id}, then the first EOS id (as generate does).
 * </ul>
 *
 * Truncation and padding are off: DJL's default would cut every text to 512 tokens silently.
 */
public final class HfTokenizer implements AutoCloseable {
  public static final String FILE = "tokenizer.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HuggingFaceTokenizer tokenizer;
  private final List<Integer> eosIds;
  private final int padId;
  private final int bosId;

  private HfTokenizer(HuggingFaceTokenizer tokenizer, List<Integer> eosIds, int padId, int bosId) {
    this.tokenizer = tokenizer;
    this.eosIds = List.copyOf(eosIds);
    this.padId = padId;
    this.bosId = bosId;
  }

  public static HfTokenizer load(Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    if (!Files.exists(file)) {
      throw new IOException(dir + ": no " + FILE + " (whale reads fast tokenizers only)");
    }
    Map<String, Integer> added = addedTokens(file);
    JsonNode gen = readIfPresent(dir.resolve("generation_config.json"));
    JsonNode cfg = readIfPresent(dir.resolve(HfConfig.FILE));
    JsonNode tokCfg = readIfPresent(dir.resolve("tokenizer_config.json"));
    List<Integer> eos = HfConfig.ids(gen.path("eos_token_id"));
    if (eos.isEmpty()) {
      eos = HfConfig.ids(cfg.path("eos_token_id"));
    }
    if (eos.isEmpty()) {
      int id = tokenId(tokCfg.path("eos_token"), added);
      if (id >= 0) {
        eos = List.of(id);
      }
    }
    int pad = gen.path("pad_token_id").asInt(cfg.path("pad_token_id").asInt(-1));
    if (pad < 0) {
      pad = tokenId(tokCfg.path("pad_token"), added);
    }
    if (pad < 0 && !eos.isEmpty()) {
      pad = eos.get(0);
    }
    int bos = gen.path("bos_token_id").asInt(cfg.path("bos_token_id").asInt(-1));
    Map<String, String> options = new HashMap<>();
    options.put("truncation", "false");
    options.put("padding", "false");
    HuggingFaceTokenizer tok;
    try {
      tok = HuggingFaceTokenizer.newInstance(file, options);
    } catch (RuntimeException e) {
      throw new IOException(file + ": the tokenizers library cannot read it: " + e.getMessage(), e);
    }
    return new HfTokenizer(tok, eos, pad < 0 ? 0 : pad, bos);
  }

  private static JsonNode readIfPresent(Path file) throws IOException {
    if (!Files.exists(file)) {
      return JSON.createObjectNode();
    }
    try {
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new IOException(file + ": not valid JSON: " + e.getMessage(), e);
    }
  }

  private static Map<String, Integer> addedTokens(Path file) throws IOException {
    Map<String, Integer> out = new HashMap<>();
    for (JsonNode t : readIfPresent(file).path("added_tokens")) {
      out.put(t.path("content").asText(), t.path("id").asInt());
    }
    return out;
  }

  /** A tokenizer_config.json token: a string or {"content": ...}; -1 when absent or unknown. */
  private static int tokenId(JsonNode token, Map<String, Integer> added) {
    String text = token.isTextual() ? token.asText() : token.path("content").asText(null);
    Integer id = text == null ? null : added.get(text);
    return id == null ? -1 : id;
  }

  /** Token ids of {@code text}, with the special tokens the tokenizer's post-processor adds. */
  public int[] encode(String text) {
    long[] ids = tokenizer.encode(text).getIds();
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = Math.toIntExact(ids[i]);
    }
    return out;
  }

  /**
   * A prompt's ids as a decoder sees them: an empty prompt is the BOS token (or "\n" without one),
   * so that sampling always has a position to start from.
   */
  public int[] promptIds(String prompt) {
    int[] ids = encode(prompt);
    if (ids.length == 0) {
      ids = bosId >= 0 ? new int[] {bosId} : encode("\n");
    }
    return ids;
  }

  /** Token ids of {@code text} continuing a sequence: no special tokens added (no BOS). */
  public int[] encodeContinuation(String text) {
    long[] ids = tokenizer.encode(text, false, false).getIds();
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = Math.toIntExact(ids[i]);
    }
    return out;
  }

  /** Text of {@code ids}, special tokens included (transformers' decode default). */
  public String decode(int[] ids) {
    long[] l = new long[ids.length];
    for (int i = 0; i < ids.length; i++) {
      l[i] = ids[i];
    }
    return tokenizer.decode(l, false);
  }

  public List<Integer> eosIds() {
    return eosIds;
  }

  public int padId() {
    return padId;
  }

  /** {@code bos_token_id} of generation_config.json or config.json, or -1. */
  public int bosId() {
    return bosId;
  }

  @Override
  public void close() {
    tokenizer.close();
  }
}
