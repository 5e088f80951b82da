package whale.workflows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * Strict reading of signal and update payloads. Handlers take the raw JSON ({@link JsonNode}, which
 * any JSON payload decodes to) and read it here, so a payload of the wrong shape never fails inside
 * the SDK's converter (where a signal is dropped without a word and an update's error names Java
 * classes): it is rejected with a message naming the field. Pure and deterministic.
 */
public final class Payloads {
  // Like SpecJson: no silent conversions ("2" for 2, 2.5 truncated to 2), and no unknown fields.
  private static final ObjectMapper STRICT = JsonMapper.builder()
      .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .build();

  private Payloads() {}

  /** A payload that must not be applied; the message names the field. */
  public static final class InvalidPayloadException extends IllegalArgumentException {
    public InvalidPayloadException(String message) {
      super(message);
    }
  }

  /**
   * The payload as a {@code type}, or {@link InvalidPayloadException} ("field: expected a number,
   * got the string \"abc\"").
   */
  public static <T> T read(JsonNode node, Class<T> type) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      throw new InvalidPayloadException("payload: expected an object, got null");
    }
    if (!node.isObject()) {
      throw new InvalidPayloadException("payload: expected an object, got " + describe(node));
    }
    try {
      return STRICT.treeToValue(node, type);
    } catch (JsonMappingException e) {
      throw new InvalidPayloadException(message(node, e));
    } catch (JsonProcessingException e) {
      throw new InvalidPayloadException("payload: " + firstLine(e.getOriginalMessage()));
    }
  }

  /** The JSON form of a payload (to send one from Java through a JsonNode handler). */
  public static JsonNode tree(Object payload) {
    return STRICT.valueToTree(payload);
  }

  /** Throws {@link InvalidPayloadException} listing {@code problems}, when there are any. */
  public static void check(Collection<String> problems) {
    if (!problems.isEmpty()) {
      throw new InvalidPayloadException(String.join("; ", problems));
    }
  }

  /** The field path of a mapping error, as the user wrote it ("event.meanAt8", "events[2].kind"). */
  static String path(JsonMappingException e) {
    StringBuilder b = new StringBuilder();
    for (JsonMappingException.Reference r : e.getPath()) {
      if (r.getFieldName() != null) {
        b.append(b.length() == 0 ? "" : ".").append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      }
    }
    return b.toString();
  }

  private static String message(JsonNode root, JsonMappingException e) {
    String path = path(e);
    String field = path.isEmpty() ? "payload" : path;
    if (e instanceof UnrecognizedPropertyException u) {
      List<String> known = new ArrayList<>();
      if (u.getKnownPropertyIds() != null) {
        u.getKnownPropertyIds().forEach(k -> known.add(String.valueOf(k)));
      }
      return field + ": unknown field (known: " + String.join(", ", new TreeSet<>(known)) + ")";
    }
    JsonNode given = at(root, e);
    if (given == null && e instanceof MismatchedInputException m && m.getTargetType() != null
        && m.getTargetType().isPrimitive()) {
      return field + ": missing, expected " + expected(m.getTargetType());
    }
    if (e instanceof MismatchedInputException m && m.getTargetType() != null && given != null) {
      return field + ": expected " + expected(m.getTargetType()) + ", got " + describe(given);
    }
    if (given != null && given.isNumber() && e.getOriginalMessage().startsWith("Numeric value")) {
      return field + ": out of range, got " + describe(given);
    }
    return field + ": " + firstLine(e.getOriginalMessage())
        + (given == null ? "" : " (got " + describe(given) + ")");
  }

  /** The node an error's path points to, or null. */
  private static JsonNode at(JsonNode root, JsonMappingException e) {
    JsonNode n = root;
    for (JsonMappingException.Reference r : e.getPath()) {
      if (n == null) {
        return null;
      }
      n = r.getFieldName() != null ? n.get(r.getFieldName()) : r.getIndex() >= 0 ? n.get(r.getIndex()) : n;
    }
    return n;
  }

  private static String expected(Class<?> t) {
    if (t == Double.class || t == double.class || t == Float.class || t == float.class) {
      return "a number";
    }
    if (t == Integer.class || t == int.class || t == Long.class || t == long.class) {
      return "an integer";
    }
    if (t == String.class) {
      return "a string";
    }
    if (t == Boolean.class || t == boolean.class) {
      return "true or false";
    }
    if (t.isEnum()) {
      TreeSet<String> names = new TreeSet<>();
      for (Object c : t.getEnumConstants()) {
        names.add(c.toString());
      }
      return "one of " + names;
    }
    if (Collection.class.isAssignableFrom(t) || t.isArray()) {
      return "an array";
    }
    return "an object";
  }

  /** A short description of a JSON value: {@code the string "abc"}, {@code null}, {@code an array}. */
  static String describe(JsonNode n) {
    if (n.isNull()) {
      return "null";
    }
    if (n.isTextual()) {
      String s = n.asText();
      return "the string \"" + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + "\"";
    }
    if (n.isNumber()) {
      return "the number " + n.asText();
    }
    if (n.isBoolean()) {
      return n.asText();
    }
    return (n.isArray() ? "an array" : n.isObject() ? "an object" : n.getNodeType().name().toLowerCase(Locale.ROOT));
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.split("\n")[0];
  }
}
