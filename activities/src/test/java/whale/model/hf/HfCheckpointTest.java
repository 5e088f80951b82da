package whale.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.model.SftExample;
import whale.model.TrainStats;

/** Save, then resume: training continues exactly as if it had never stopped. */
class HfCheckpointTest {
  static final List<SftExample> EXAMPLES = List.of(new SftExample("What is 2 + 2?", " 4\n"),
      new SftExample("What is 3 + 3?", " 6\n"), new SftExample("Capital of France?", " Paris\n"));
  @TempDir Path tmp;

  private Path copyOf(String model) throws IOException {
    Path dst = tmp.resolve("base-" + model);
    Files.createDirectories(dst);
    try (Stream<Path> files = Files.list(HfFixtures.dir(model))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          Files.copy(f, dst.resolve(f.getFileName()));
        }
      }
    }
    return dst;
  }

  private static long size(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  private static float[] probe(HfModel m) {
    return LlamaDecoderParityTest.lastLogits(m.decoder(), m.manager(), m.promptIds("What is 3 + 3?"));
  }

  @Test
  void loraResumesExactlyAndHoldsOnlyTheAdapter() throws Exception {
    Path base = copyOf("qwen2");
    Path ck = tmp.resolve("ck-lora");
    float[] continued;
    TrainStats last;
    try (HfModel m = HfModel.load(base, HfModel.LINE)) {
      m.trainLora(new HfModel.LoraSpec(4, 8, List.of("q_proj", "k_proj", "v_proj", "o_proj")), 1);
      m.sft(EXAMPLES, 2, 1e-2f, 1);
      m.sft(EXAMPLES, 2, 1e-2f, 2);
      m.save(ck);
      last = m.sft(EXAMPLES, 2, 1e-2f, 3);
      continued = probe(m);
    }
    assertFalse(Files.exists(ck.resolve(Safetensors.SINGLE)), "no base weights in a LoRA checkpoint");
    System.out.printf("LoRA checkpoint %d bytes; base weights %d bytes%n", size(ck),
        Files.size(base.resolve(Safetensors.SINGLE)));
    try (HfModel o = HfModel.open(ck, HfModel.LINE)) {
      assertEquals(null, o.trainer());
      assertEquals(4 * o.decoder().config().layers(), o.decoder().adapters().size());
    }
    try (HfModel r = HfModel.resume(ck, HfModel.LINE)) {
      assertEquals(4, r.trainer().optimizerSteps());
      TrainStats again = r.sft(EXAMPLES, 2, 1e-2f, 3);
      assertEquals(last, again);
      assertArrayEquals(continued, probe(r));
    }
    // the base changes under the checkpoint: refused, naming the field
    ObjectMapper json = new ObjectMapper();
    ObjectNode c = (ObjectNode) json.readTree(base.resolve("config.json").toFile());
    c.put("rms_norm_eps", 1e-5);
    json.writeValue(base.resolve("config.json").toFile(), c);
    String msg = assertThrows(IOException.class, () -> HfModel.resume(ck, HfModel.LINE)).getMessage();
    assertTrue(msg.contains("whale_checkpoint.json") && msg.contains("\"base\"")
        && msg.contains("no longer holds"), msg);
  }

  @Test
  void fullResumesExactly() throws Exception {
    Path ck = tmp.resolve("ck-full");
    float[] continued;
    try (HfModel m = HfModel.load(HfFixtures.dir("llama3"), HfModel.LINE)) {
      m.trainFull();
      m.sft(EXAMPLES, 2, 3e-3f, 1);
      m.save(ck);
      m.save(ck); // replacing an existing checkpoint is fine (an activity may run twice)
      m.sft(EXAMPLES, 2, 3e-3f, 2);
      continued = probe(m);
    }
    System.out.printf("full checkpoint %d bytes%n", size(ck));
    float[] saved;
    try (HfModel r = HfModel.resume(ck, HfModel.LINE)) {
      saved = probe(r);
    }
    // opened to sample or export: the same weights, no trainer and no AdamW moments held
    try (HfModel o = HfModel.open(ck, HfModel.LINE)) {
      assertEquals(null, o.trainer());
      assertFalse(o.trainsAllWeights());
      assertArrayEquals(saved, probe(o));
      assertEquals(o.decoder().parameterBytes(), o.residentBytes(), "its weights count as its own");
    }
    try (HfModel r = HfModel.resume(ck, HfModel.LINE)) {
      assertEquals(2, r.trainer().optimizerSteps());
      r.sft(EXAMPLES, 2, 3e-3f, 2);
      assertArrayEquals(continued, probe(r));
    }
  }

  @Test
  void notACheckpoint() {
    String msg = assertThrows(IOException.class,
        () -> HfModel.resume(HfFixtures.dir("llama"), HfModel.LINE)).getMessage();
    assertTrue(msg.contains("no whale_checkpoint.json"), msg);
  }
}
