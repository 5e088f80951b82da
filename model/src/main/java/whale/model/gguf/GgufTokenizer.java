package whale.model.gguf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A GGUF's {@code tokenizer.*} metadata as Hugging Face tokenizer files. Only byte-level BPE
 * vocabularies ({@code tokenizer.ggml.model} "gpt2") are rebuilt, for the pre-tokenizers whose
 * Hugging Face form is known exactly; anything else is refused rather than approximated, since a
 * tokenizer that splits text differently from the one the model was trained with fails quietly.
 *
 * <p>Token types (llama.cpp's): 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
 * Control tokens become special added tokens, user-defined ones plain added tokens.
 */
final class GgufTokenizer {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String MODEL = "tokenizer.ggml.model";
  static final String PRE = "tokenizer.ggml.pre";
  static final String TOKENS = "tokenizer.ggml.tokens";
  static final String TYPES = "tokenizer.ggml.token_type";
  static final String MERGES = "tokenizer.ggml.merges";
  static final int CONTROL = 3;
  static final int USER_DEFINED = 4;

  /** Llama 3's split regex (tokenizer.json of Meta-Llama-3; llama.cpp's "llama-bpe"). */
  static final String LLAMA3_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
      + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  static final Set<String> PRE_TOKENIZERS = Set.of("smollm", "gpt-2", "llama-bpe");

  private final String pre;
  private final List<String> tokens;
  private final List<Long> types;
  private final List<String> merges;
  private final int bos;
  private final int eos;
  private final int eot;
  private final int pad;
  private final int unk;
  private final boolean addBos;
  private final boolean addEos;
  private final Object chatTemplate; // a String, or a list of {name, template}

  private GgufTokenizer(String pre, List<String> tokens, List<Long> types, List<String> merges,
      int[] ids, boolean addBos, boolean addEos, Object chatTemplate) {
    this.pre = pre;
    this.tokens = tokens;
    this.types = types;
    this.merges = merges;
    this.bos = ids[0];
    this.eos = ids[1];
    this.eot = ids[2];
    this.pad = ids[3];
    this.unk = ids[4];
    this.addBos = addBos;
    this.addEos = addEos;
    this.chatTemplate = chatTemplate;
  }

  /** Reads and checks the tokenizer keys of {@code f}; {@code vocabSize} is the embedding's rows. */
  static GgufTokenizer read(GgufFile f, int vocabSize) throws IOException {
    String model = f.string(MODEL);
    if (!model.equals("gpt2")) {
      throw new IOException(f.path() + ": metadata " + MODEL + " is \"" + model + "\""
          + (model.equals("llama") ? " (SentencePiece)" : "")
          + "; whale imports byte-level BPE vocabularies (\"gpt2\") only");
    }
    String pre = f.string(PRE);
    if (!PRE_TOKENIZERS.contains(pre)) {
      throw new IOException(f.path() + ": metadata " + PRE + " is \"" + pre
          + "\"; whale knows the Hugging Face form of " + new java.util.TreeSet<>(PRE_TOKENIZERS)
          + " only");
    }
    List<String> tokens = f.array(TOKENS, String.class);
    List<Long> types = f.array(TYPES, Long.class);
    List<String> merges = f.array(MERGES, String.class);
    for (String merge : merges) {
      if (merge.indexOf(' ', 1) < 0) {
        throw new IOException(f.path() + ": metadata " + MERGES + " holds \"" + merge
            + "\", which is not two tokens separated by a space");
      }
    }
    if (types.size() != tokens.size()) {
      throw new IOException(f.path() + ": metadata " + TYPES + " has " + types.size()
          + " entries but " + TOKENS + " has " + tokens.size());
    }
    if (tokens.size() > vocabSize) {
      throw new IOException(f.path() + ": metadata " + TOKENS + " has " + tokens.size()
          + " tokens, more than the embedding's " + vocabSize + " rows");
    }
    int[] ids = new int[5];
    String[] keys = {"bos", "eos", "eot", "padding", "unknown"};
    for (int i = 0; i < keys.length; i++) {
      String key = "tokenizer.ggml." + keys[i] + "_token_id";
      long id = f.integer(key, -1);
      if (id >= tokens.size() || id < -1) {
        throw new IOException(f.path() + ": metadata " + key + " is " + id + ", not a token id (the "
            + "vocabulary has " + tokens.size() + ")");
      }
      ids[i] = (int) id;
    }
    Object template = null;
    List<Object> named = new ArrayList<>();
    for (Map.Entry<String, Object> e : f.metadata().entrySet()) {
      if (e.getKey().startsWith("tokenizer.chat_template.")) { // llama.cpp's named templates
        ObjectNode t = JSON.createObjectNode();
        t.put("name", e.getKey().substring("tokenizer.chat_template.".length()));
        t.put("template", f.string(e.getKey()));
        named.add(t);
      }
    }
    if (f.has("tokenizer.chat_template")) {
      template = f.string("tokenizer.chat_template");
      if (!named.isEmpty()) {
        ObjectNode t = JSON.createObjectNode();
        t.put("name", "default");
        t.put("template", (String) template);
        named.add(0, t);
        template = named;
      }
    }
    return new GgufTokenizer(pre, tokens, types, merges, ids,
        f.bool("tokenizer.ggml.add_bos_token", false), f.bool("tokenizer.ggml.add_eos_token", false),
        template);
  }

  /** tokenizer.json: BPE model, added tokens, and the pre-tokenizer {@code pre} names. */
  ObjectNode tokenizerJson() {
    ObjectNode t = JSON.createObjectNode();
    t.put("version", "1.0");
    t.putNull("truncation");
    t.putNull("padding");
    ArrayNode added = t.putArray("added_tokens");
    for (int id = 0; id < tokens.size(); id++) {
      int type = types.get(id).intValue();
      if (type == CONTROL || type == USER_DEFINED) {
        ObjectNode a = added.addObject();
        a.put("id", id);
        a.put("content", tokens.get(id));
        a.put("single_word", false);
        a.put("lstrip", false);
        a.put("rstrip", false);
        a.put("normalized", type != CONTROL); // transformers' defaults for special / plain tokens
        a.put("special", type == CONTROL);
      }
    }
    t.putNull("normalizer");
    boolean llama3 = pre.equals("llama-bpe");
    switch (pre) {
      case "smollm": { // digits one by one, then GPT-2's regex (llama.cpp: "\p{N}" then gpt-2's)
        ObjectNode seq = t.putObject("pre_tokenizer");
        seq.put("type", "Sequence");
        ArrayNode list = seq.putArray("pretokenizers");
        list.addObject().put("type", "Digits").put("individual_digits", true);
        list.add(byteLevel(false, true, true));
        break;
      }
      case "gpt-2":
        t.set("pre_tokenizer", byteLevel(false, true, true));
        break;
      default: { // llama-bpe: its own regex, then bytes without GPT-2's regex
        ObjectNode seq = t.putObject("pre_tokenizer");
        seq.put("type", "Sequence");
        ArrayNode list = seq.putArray("pretokenizers");
        ObjectNode split = list.addObject();
        split.put("type", "Split");
        split.putObject("pattern").put("Regex", LLAMA3_REGEX);
        split.put("behavior", "Isolated");
        split.put("invert", false);
        list.add(byteLevel(false, true, false));
      }
    }
    t.set("post_processor", postProcessor());
    t.set("decoder", byteLevel(true, true, true));
    ObjectNode m = t.putObject("model");
    m.put("type", "BPE");
    m.putNull("dropout");
    m.putNull("unk_token");
    m.putNull("continuing_subword_prefix");
    m.putNull("end_of_word_suffix");
    m.put("fuse_unk", false);
    m.put("byte_fallback", false);
    m.put("ignore_merges", llama3); // llama.cpp looks a whole llama-bpe word up first, as HF does
    ObjectNode vocab = m.putObject("vocab");
    for (int id = 0; id < tokens.size(); id++) {
      if (!vocab.has(tokens.get(id))) { // a duplicate (an added token's text) stays an added token
        vocab.put(tokens.get(id), id);
      }
    }
    ArrayNode pairs = m.putArray("merges");
    for (String merge : merges) {
      int space = merge.indexOf(' ', 1); // as llama.cpp splits them
      pairs.addArray().add(merge.substring(0, space)).add(merge.substring(space + 1));
    }
    return t;
  }

  private static ObjectNode byteLevel(boolean prefixSpace, boolean trimOffsets, boolean regex) {
    ObjectNode b = JSON.createObjectNode();
    b.put("type", "ByteLevel");
    b.put("add_prefix_space", prefixSpace);
    b.put("trim_offsets", trimOffsets);
    b.put("use_regex", regex);
    return b;
  }

  /** BOS/EOS added as the GGUF says (TemplateProcessing); else GPT-2's offsets-only ByteLevel. */
  private ObjectNode postProcessor() {
    if (!(addBos && bos >= 0) && !(addEos && eos >= 0)) {
      return byteLevel(true, false, true);
    }
    ObjectNode p = JSON.createObjectNode();
    p.put("type", "TemplateProcessing");
    sequence(p.putArray("single"), "A", 0);
    sequence(sequence(p.putArray("pair"), "A", 0), "B", 1);
    ObjectNode specials = p.putObject("special_tokens");
    Set<Integer> done = new HashSet<>();
    for (int id : new int[] {addBos ? bos : -1, addEos ? eos : -1}) {
      if (id >= 0 && done.add(id)) {
        ObjectNode s = specials.putObject(tokens.get(id));
        s.put("id", tokens.get(id));
        s.putArray("ids").add(id);
        s.putArray("tokens").add(tokens.get(id));
      }
    }
    return p;
  }

  /** Appends [BOS] sequence [EOS] (each special as the GGUF asks) to {@code list}. */
  private ArrayNode sequence(ArrayNode list, String id, int typeId) {
    if (addBos && bos >= 0) {
      list.addObject().putObject("SpecialToken").put("id", tokens.get(bos)).put("type_id", typeId);
    }
    list.addObject().putObject("Sequence").put("id", id).put("type_id", typeId);
    if (addEos && eos >= 0) {
      list.addObject().putObject("SpecialToken").put("id", tokens.get(eos)).put("type_id", typeId);
    }
    return list;
  }

  /** tokenizer_config.json: special token strings, BOS/EOS flags, chat template. */
  ObjectNode tokenizerConfig(int contextLength) {
    ObjectNode c = JSON.createObjectNode();
    c.put("tokenizer_class", "PreTrainedTokenizerFast");
    c.put("add_bos_token", addBos);
    c.put("add_eos_token", addEos);
    c.put("add_prefix_space", false);
    c.put("clean_up_tokenization_spaces", false);
    c.put("model_max_length", contextLength);
    putToken(c, "bos_token", bos);
    putToken(c, "eos_token", eos);
    putToken(c, "pad_token", pad);
    putToken(c, "unk_token", unk);
    if (chatTemplate instanceof String s) {
      c.put("chat_template", s);
    } else if (chatTemplate != null) {
      ArrayNode list = c.putArray("chat_template");
      for (Object o : (List<?>) chatTemplate) {
        list.add((ObjectNode) o);
      }
    }
    return c;
  }

  private void putToken(ObjectNode c, String field, int id) {
    if (id >= 0) {
      c.put(field, tokens.get(id));
    }
  }

  /** generation_config.json: BOS, EOS (with EOT when the GGUF names a different one), pad. */
  ObjectNode generationConfig() {
    ObjectNode g = JSON.createObjectNode();
    putSpecialIds(g);
    return g;
  }

  /** bos_token_id, eos_token_id (an id, or [eos, eot]) and pad_token_id, where known. */
  void putSpecialIds(ObjectNode j) {
    if (bos >= 0) {
      j.put("bos_token_id", bos);
    }
    if (eos >= 0 && eot >= 0 && eot != eos) {
      j.putArray("eos_token_id").add(eos).add(eot);
    } else if (eos >= 0 || eot >= 0) {
      j.put("eos_token_id", eos >= 0 ? eos : eot);
    }
    if (pad >= 0) {
      j.put("pad_token_id", pad);
    }
  }
}
