package whale.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.lib.tag.Tag;
import com.hubspot.jinjava.tree.Node;
import com.hubspot.jinjava.tree.TagNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A model's chat template, rendered as transformers' {@code apply_chat_template(tokenize=False)}
 * renders it: Jinja with {@code trim_blocks} and {@code lstrip_blocks}, the variables
 * {@code messages}, {@code tools}, {@code add_generation_prompt}, {@code bos_token},
 * {@code eos_token}, the helpers {@code raise_exception} and {@code strftime_now}, transformers'
 * {@code tojson} (Python's json.dumps), and {@code {% generation %}} blocks, whose spans mark the
 * assistant's tokens for training.
 */
public final class ChatTemplate {
  /** What a render produced: the prompt, and the character spans of its generation blocks. */
  public record Rendered(String text, List<int[]> generationSpans) {}

  // generation blocks are marked in the output and cut out afterwards; an input that contains a
  // marker is refused, so the spans cannot be forged
  private static final String START = "\uE000whale:generation\uE001";
  private static final String END = "\uE000whale:endgeneration\uE001";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The built-in model's template: plain text turns it was pretrained near, no special tokens. */
  public static final String BUILTIN = "{% for m in messages %}"
      + "{% if m.role == 'tool' %}{{ 'Tool ' + (m.name or 'result') + ': ' + m.content + '\\n' }}"
      + "{% elif m.role == 'assistant' %}{{ 'A: ' }}{% generation %}{{ m.content }}"
      + "{% for c in m.tool_calls %}{% set call = {'name': c.function.name, "
      + "'arguments': c.function.arguments} %}{{ '<tool_call>' + call | tojson + '</tool_call>' }}{% endfor %}"
      + "{{ '\\n' }}{% endgeneration %}"
      + "{% elif m.role == 'user' %}{{ 'Q: ' + m.content + '\\n' }}"
      + "{% else %}{{ m.content + '\\n' }}{% endif %}{% endfor %}"
      + "{% if add_generation_prompt %}{{ 'A: ' }}{% endif %}";

  private final String source;
  private final String origin;
  private final String bosToken;
  private final String eosToken;
  private final Jinjava jinja;

  public ChatTemplate(String source, String origin, String bosToken, String eosToken) {
    this.source = source;
    this.origin = origin;
    this.bosToken = bosToken == null ? "" : bosToken;
    this.eosToken = eosToken == null ? "" : eosToken;
    this.jinja = engine();
  }

  /** A model without a chat template: rendering fails with {@code why}. */
  public static ChatTemplate missing(String why) {
    return new ChatTemplate(null, why, "", "");
  }

  public String bosToken() {
    return bosToken;
  }

  /** One instance: every builtin-model episode run asks for it, and a Jinjava engine is not free. */
  private static final class Builtin {
    static final ChatTemplate INSTANCE = new ChatTemplate(BUILTIN, "the built-in model's chat template", "", "");
  }

  public static ChatTemplate builtin() {
    return Builtin.INSTANCE;
  }

  /**
   * The template of a Hugging Face model (or tokenizer) directory: {@code chat_template.jinja}, or
   * {@code chat_template} in {@code tokenizer_config.json} (a string, or a list of named templates
   * of which {@code default} is taken), as transformers reads them.
   */
  /** {@link #of}, or a {@link #missing} template naming why it could not be read. */
  public static ChatTemplate ofOrMissing(Path dir) {
    try {
      return of(dir);
    } catch (IOException e) {
      return missing(e.getMessage());
    }
  }

  public static ChatTemplate of(Path dir) throws IOException {
    Path config = dir.resolve("tokenizer_config.json");
    JsonNode c = Files.isRegularFile(config) ? JSON.readTree(config.toFile()) : JSON.createObjectNode();
    String bos = token(c.get("bos_token"));
    String eos = token(c.get("eos_token"));
    Path jinjaFile = dir.resolve("chat_template.jinja");
    if (Files.isRegularFile(jinjaFile)) {
      return new ChatTemplate(Files.readString(jinjaFile, StandardCharsets.UTF_8), jinjaFile.toString(), bos, eos);
    }
    JsonNode t = c.get("chat_template");
    if (t != null && t.isTextual()) {
      return new ChatTemplate(t.asText(), config + " chat_template", bos, eos);
    }
    if (t != null && t.isArray()) {
      for (JsonNode named : t) {
        if ("default".equals(named.path("name").asText())) {
          return new ChatTemplate(named.path("template").asText(), config + " chat_template[default]", bos, eos);
        }
      }
    }
    throw new IOException(dir + ": no chat template (neither chat_template.jinja nor chat_template in "
        + "tokenizer_config.json)");
  }

  private static String token(JsonNode t) {
    if (t == null || t.isNull()) {
      return "";
    }
    return t.isTextual() ? t.asText() : t.path("content").asText("");
  }

  public String source() {
    return source;
  }

  /** Where the template came from (a file, or a field of one): errors name it. */
  public String origin() {
    return origin;
  }

  public String eosToken() {
    return eosToken;
  }

  /** The prompt for {@code messages} with the assistant's turn opened. */
  public String prompt(List<Message> messages, List<ToolSchema> tools) {
    return render(messages, tools, true).text();
  }

  public Rendered render(List<Message> messages, List<ToolSchema> tools, boolean addGenerationPrompt) {
    if (source == null) {
      throw new ChatTemplateException(origin);
    }
    List<Map<String, Object>> ms = new ArrayList<>();
    for (Message m : messages) {
      if (m.content().contains("\uE000whale:")) {
        throw new IllegalArgumentException("a message contains whale's reserved marker \\uE000whale:");
      }
      ms.add(m.toTemplate());
    }
    Map<String, Object> vars = new HashMap<>();
    vars.put("messages", ms);
    if (tools != null && !tools.isEmpty()) {
      vars.put("tools", tools.stream().map(ToolSchema::toTemplate).toList());
    }
    vars.put("add_generation_prompt", addGenerationPrompt);
    vars.put("bos_token", bosToken);
    vars.put("eos_token", eosToken);
    RenderResult r;
    RAISED.remove();
    try {
      r = jinja.renderForResult(source, vars);
    } finally {
      String raised = RAISED.get();
      RAISED.remove();
      if (raised != null) {
        throw new ChatTemplateException(origin + ": raise_exception: " + raised);
      }
    }
    for (TemplateError e : r.getErrors()) {
      if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
        throw new ChatTemplateException(origin + ": line " + e.getLineno() + ": " + e.getMessage());
      }
    }
    return cut(r.getOutput());
  }

  /** The output without its generation markers, and where the marked text now lies. */
  private static Rendered cut(String marked) {
    StringBuilder out = new StringBuilder(marked.length());
    List<int[]> spans = new ArrayList<>();
    int i = 0;
    while (true) {
      int s = marked.indexOf(START, i);
      if (s < 0) {
        out.append(marked, i, marked.length());
        return new Rendered(out.toString(), List.copyOf(spans));
      }
      out.append(marked, i, s);
      int e = marked.indexOf(END, s);
      String inner = marked.substring(s + START.length(), e);
      spans.add(new int[] {out.length(), out.length() + inner.length()});
      out.append(inner);
      i = e + END.length();
    }
  }

  /** An error of a template: it names the template's file or field and the message. */
  public static final class ChatTemplateException extends RuntimeException {
    public ChatTemplateException(String message) {
      super(message);
    }
  }

  private static final ThreadLocal<String> RAISED = new ThreadLocal<>();

  /** {@code raise_exception(message)}: the template refuses the conversation. */
  public static String raiseException(Object message) {
    RAISED.set(String.valueOf(message));
    throw new IllegalStateException(String.valueOf(message));
  }

  /** {@code strftime_now(format)}: the current date as Python's strftime formats it. */
  public static String strftimeNow(String format) {
    java.time.ZonedDateTime now = java.time.ZonedDateTime.now();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c != '%' || i + 1 == format.length()) {
        b.append(c);
        continue;
      }
      char f = format.charAt(++i);
      b.append(switch (f) {
        case 'd' -> String.format("%02d", now.getDayOfMonth());
        case 'm' -> String.format("%02d", now.getMonthValue());
        case 'Y' -> String.valueOf(now.getYear());
        case 'y' -> String.format("%02d", now.getYear() % 100);
        case 'H' -> String.format("%02d", now.getHour());
        case 'M' -> String.format("%02d", now.getMinute());
        case 'S' -> String.format("%02d", now.getSecond());
        case 'b' -> now.getMonth().getDisplayName(java.time.format.TextStyle.SHORT, java.util.Locale.ENGLISH);
        case 'B' -> now.getMonth().getDisplayName(java.time.format.TextStyle.FULL, java.util.Locale.ENGLISH);
        case 'a' -> now.getDayOfWeek().getDisplayName(java.time.format.TextStyle.SHORT, java.util.Locale.ENGLISH);
        case 'A' -> now.getDayOfWeek().getDisplayName(java.time.format.TextStyle.FULL, java.util.Locale.ENGLISH);
        case '%' -> "%";
        default -> "%" + f;
      });
    }
    return b.toString();
  }

  private static Jinjava engine() {
    // Python Jinja's semantics where Jinjava's defaults differ: trim/lstrip blocks as transformers
    // sets them, '-' trimming around expressions too, dicts iterate over keys, Python reprs
    JinjavaConfig config = JinjavaConfig.newBuilder()
        .withTrimBlocks(true).withLstripBlocks(true)
        .withLegacyOverrides(LegacyOverrides.newBuilder()
            .withUsePyishObjectMapper(true).withIterateOverMapKeys(true).withEvaluateMapKeys(true)
            .withUseNaturalOperatorPrecedence(true).withParseWhitespaceControlStrictly(true)
            .withUseTrimmingForNotesAndExpressions(true).withKeepNullableLoopValues(true).build())
        .build();
    Jinjava j = new Jinjava(config);
    j.getGlobalContext().registerFilter(new ToJson());
    j.getGlobalContext().registerTag(new GenerationTag());
    j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception",
        ChatTemplate.class, "raiseException", Object.class));
    j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now",
        ChatTemplate.class, "strftimeNow", String.class));
    return j;
  }

  /** transformers' tojson: json.dumps(x, ensure_ascii=False, indent=indent). */
  static final class ToJson implements Filter {
    @Override
    public String getName() {
      return "tojson";
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
      return PyJson.dumps(var, args.length > 0 ? Integer.parseInt(args[0]) : -1);
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
      Object indent = kwargs.containsKey("indent") ? kwargs.get("indent") : args.length > 0 ? args[0] : null;
      return PyJson.dumps(var, indent == null ? -1 : ((Number) indent).intValue());
    }
  }

  /** {% generation %}...{% endgeneration %}: the assistant's own tokens, marked for the loss. */
  static final class GenerationTag implements Tag {
    @Override
    public String getName() {
      return "generation";
    }

    @Override
    public String getEndTagName() {
      return "endgeneration";
    }

    @Override
    public String interpret(TagNode tagNode, JinjavaInterpreter interpreter) {
      StringBuilder b = new StringBuilder(START);
      for (Node child : tagNode.getChildren()) {
        b.append(child.render(interpreter).getValue());
      }
      return b.append(END).toString();
    }
  }
}
