package whale.workers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import whale.chat.ChatJson;
import whale.chat.ChatTemplate;
import whale.chat.Message;
import whale.chat.ToolSchema;
import whale.model.hf.HfTokenizer;

/** What a model sees for a conversation: its chat template rendered, as a chat harness's turn. */
@Command(name = "render", mixinStandardHelpOptions = true,
    description = "Render a conversation with a model's chat template (as transformers' "
        + "apply_chat_template(tokenize=False) does, with the assistant's turn opened) and print it.")
public class RenderCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Spec CommandSpec spec;

  @Option(names = "--model", required = true,
      description = "A Hugging Face model (or tokenizer) directory, or 'builtin' for the built-in model")
  String model;

  @Option(names = "--messages", required = true,
      description = "JSON file: an array of {role, content[, tool_calls][, name]} messages")
  Path messages;

  @Option(names = "--tools", description = "JSON file: an array of tools "
      + "({type: function, function: {name, description, parameters}})")
  Path tools;

  @Option(names = "--no-generation-prompt", description = "Do not open the assistant's turn")
  boolean noGenerationPrompt;

  @Option(names = "--json", description = "Print {\"text\", \"tokens\"} (the tokens need a tokenizer.json)")
  boolean json;

  @Override
  public Integer call() throws Exception {
    List<Message> ms;
    List<ToolSchema> ts;
    try {
      ms = ChatJson.messages(read(messages));
      ts = tools == null ? List.of() : ChatJson.tools(read(tools));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    boolean builtin = model.equals("builtin");
    Path dir = builtin ? null : Path.of(model);
    if (dir != null && !Files.isDirectory(dir)) {
      throw new ParameterException(spec.commandLine(), "--model: no such directory: " + dir);
    }
    ChatTemplate template = builtin ? ChatTemplate.builtin() : ChatTemplate.of(dir);
    String text = template.render(ms, ts, !noGenerationPrompt).text();
    if (!json) {
      spec.commandLine().getOut().print(text);
    } else {
      ObjectNode o = JSON.createObjectNode().put("text", text);
      var tokens = o.putArray("tokens");
      if (builtin) {
        for (int id : whale.model.CharTokenizer.encode(text)) {
          tokens.add(id);
        }
      } else {
        try (HfTokenizer tok = HfTokenizer.load(dir)) {
          for (int id : tok.encodeContinuation(text)) {
            tokens.add(id);
          }
        }
      }
      spec.commandLine().getOut().println(JSON.writeValueAsString(o));
    }
    spec.commandLine().getOut().flush();
    return 0;
  }

  private JsonNode read(Path file) throws java.io.IOException {
    try {
      return JSON.readTree(file.toFile());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new ParameterException(spec.commandLine(), file + ": not JSON: " + e.getOriginalMessage());
    }
  }
}
