package whale.workflows;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every spec under examples/ (and the jar's demo specs) is one a user can start as it is. */
class ExampleSpecsTest {
  @Test
  void everyExampleSpecParsesAndValidates() throws Exception {
    List<Path> specs;
    try (var files = Files.list(Path.of("../examples"))) {
      specs = files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    assertFalse(specs.isEmpty());
    for (Path p : specs) {
      String json = Files.readString(p);
      // a comparison names its schedules; anything else is one experiment
      Object parsed = json.contains("\"schedules\"") ? SpecJson.parseComparison(json) : SpecJson.parse(json);
      assertNotNull(parsed, p.toString());
    }
  }
}
