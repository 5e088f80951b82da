package whale.workflows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.List;
import java.util.stream.Collectors;

/** Reads a spec file: JSON syntax and type errors are reported with the field path, then validated. */
public final class SpecJson {
  // Strict: a spec value of the wrong JSON type is an error, never silently converted ("20" for a
  // number, 8.5 truncated to 8), and nothing may follow the spec object.
  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
      .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();

  private SpecJson() {}

  public static ExperimentSpec parse(String json) {
    return SpecValidator.validate(read(json, ExperimentSpec.class));
  }

  /** A comparison spec ({@code whale compare}), with every problem listed. */
  public static ComparisonSpec parseComparison(String json) {
    ComparisonSpec spec = read(json, ComparisonSpec.class);
    List<String> problems = spec.problems();
    if (!problems.isEmpty()) {
      throw new InvalidSpecException(problems);
    }
    return spec;
  }

  private static <T> T read(String json, Class<T> type) {
    T spec;
    try {
      spec = MAPPER.readValue(json, type);
    } catch (JsonMappingException e) {
      String path = e.getPath().stream()
          .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
          .collect(Collectors.joining("."));
      throw new InvalidSpecException(List.of(
          (path.isEmpty() ? "spec" : path) + ": " + e.getOriginalMessage().split("\n")[0]));
    } catch (JsonProcessingException e) {
      throw new InvalidSpecException(List.of("spec: not valid JSON: " + e.getOriginalMessage()
          + " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr()));
    }
    if (spec == null) {
      throw new InvalidSpecException(List.of("spec: empty document"));
    }
    return spec;
  }

  public static String write(ExperimentSpec spec) {
    try {
      return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(spec);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
