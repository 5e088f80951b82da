package whale.task;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads dataset JSONL: every non-blank line must be one JSON object; anything else is rejected with
 * the file name and line number, and so is a field the caller finds malformed ({@link #fail}).
 */
public final class Jsonl {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Jsonl() {}

  /** A malformed dataset file; the message starts with "file:line: ". */
  public static final class MalformedFileException extends IllegalArgumentException {
    public MalformedFileException(Path file, long line, String message) {
      super(file + ":" + line + ": " + message);
    }
  }

  /** Called with each line's number (from 1) and its object. */
  public interface LineHandler {
    void accept(long line, JsonNode object);
  }

  public static void forEachObject(Path file, LineHandler handler) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no such dataset file: " + file);
    }
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String s;
      long line = 0;
      while ((s = r.readLine()) != null) {
        line++;
        if (s.isBlank()) {
          continue;
        }
        JsonNode o;
        try {
          o = JSON.readTree(s);
        } catch (JsonProcessingException e) {
          throw new MalformedFileException(file, line, "not valid JSON: " + e.getOriginalMessage());
        }
        if (o == null || !o.isObject()) {
          throw new MalformedFileException(file, line, "expected a JSON object");
        }
        handler.accept(line, o);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /** The first of {@code names} present in {@code o}, or null. */
  public static JsonNode first(JsonNode o, List<String> names) {
    for (String n : names) {
      if (o.has(n)) {
        return o.get(n);
      }
    }
    return null;
  }

  /** The first of {@code names}, which must be a non-empty string. */
  public static String requiredString(Path file, long line, JsonNode o, List<String> names, String what) {
    JsonNode n = first(o, names);
    if (n == null) {
      throw new MalformedFileException(file, line, "no " + what + " field (one of " + names + ")");
    }
    if (!n.isTextual() || n.asText().isBlank()) {
      throw new MalformedFileException(file, line, what + " (" + names + ") must be a non-empty string");
    }
    return n.asText().trim();
  }
}
