package whale.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code whale generate} and {@code whale export} in process on the Hugging Face fixtures, and the
 * model directory check {@code demo} and {@code start} make before a run starts. (Export of a real
 * RSFT checkpoint: {@link HfRunTest}.)
 */
class HfCliTest {
  static final Path FIXTURES = HfRunTest.QWEN2.getParent();
  @TempDir Path tmp;

  /** Runs {@code whale args...}; returns stdout, failing the test unless it exits 0. */
  static String ok(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = WhaleCli.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int rc = cli.execute(args);
    assertEquals(0, rc, () -> List.of(args) + " failed: " + err);
    return out.toString();
  }

  /** Runs {@code whale args...}; returns stderr, failing the test if it exits 0. */
  static String fails(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = WhaleCli.commandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int rc = cli.execute(args);
    assertNotEquals(0, rc, () -> List.of(args) + " should fail, printed " + out);
    return err.toString();
  }

  @Test
  void aCudaWorkerWithoutAGpuRefusesToStartSayingWhatIsMissing() {
    if (ai.djl.engine.Engine.getEngine("PyTorch").getGpuCount() > 0) {
      return; // a GPU machine: the worker would start and wait for Temporal
    }
    // no Temporal service runs here: the check must come before any connection is tried
    String err = fails("worker", "--device", "cuda", "--queues", "gpu", "--address",
        "127.0.0.1:1");
    assertTrue(err.startsWith("whale: model.device cuda needs a GPU this process cannot use: "), err);
    assertTrue(err.contains("the PyTorch engine sees no GPU (Engine.getGpuCount() = 0)"), err);
    if (System.getenv("PYTORCH_FLAVOR") == null) {
      assertTrue(err.contains("PYTORCH_FLAVOR is not set, must be cu128"), err);
    }
    String bad = fails("worker", "--device", "tpu", "--address", "127.0.0.1:1");
    assertTrue(bad.contains("--device (or WHALE_DEVICE): cpu or cuda, got 'tpu'"), bad);
  }

  @Test
  void generateOnAFloat16BaseGivesTheSameGreedyTokensAndRefusesCudaWithoutAGpu() throws Exception {
    JsonNode g = new ObjectMapper().readTree(FIXTURES.resolve("golden.json").toFile())
        .path("models").path("qwen2");
    JsonNode p = g.path("prompts").get(0);
    JsonNode out = new ObjectMapper().readTree(ok("generate", "--model",
        HfRunTest.QWEN2.toString(), "--prompt", p.path("text").asText(), "--max-new-tokens", "12",
        "--dtype", "float16", "--json"));
    assertEquals(ints(g.path("greedy").get(0)), ints(out.path("tokens")));
    String bad = fails("generate", "--model", HfRunTest.QWEN2.toString(), "--prompt", "x",
        "--dtype", "bfloat16");
    assertTrue(bad.contains("--dtype: float32 or float16, not \"bfloat16\""), bad);
    if (ai.djl.engine.Engine.getEngine("PyTorch").getGpuCount() == 0) {
      String err = fails("generate", "--model", HfRunTest.QWEN2.toString(), "--prompt", "x",
          "--device", "cuda");
      assertTrue(err.startsWith("whale: model.device cuda needs a GPU this process cannot use: "),
          err);
    }
  }

  @Test
  void generateMatchesTransformersGreedyTokens() throws Exception {
    JsonNode g = new ObjectMapper().readTree(FIXTURES.resolve("golden.json").toFile())
        .path("models").path("qwen2");
    JsonNode p = g.path("prompts").get(0);
    JsonNode out = new ObjectMapper().readTree(ok("generate", "--model",
        HfRunTest.QWEN2.toString(), "--prompt", p.path("text").asText(), "--max-new-tokens", "12",
        "--json"));
    assertEquals(ints(g.path("greedy").get(0)), ints(out.path("tokens")));
    assertEquals(ints(p.path("ids")), ints(out.path("promptTokens")));
    String a = ok("generate", "--model", HfRunTest.QWEN2.toString(), "--prompt", "e2e4",
        "--temperature", "1", "--top-p", "0.9", "--seed", "5", "--max-new-tokens", "8");
    assertEquals(a, ok("generate", "--model", HfRunTest.QWEN2.toString(), "--prompt", "e2e4",
        "--temperature", "1", "--top-p", "0.9", "--seed", "5", "--max-new-tokens", "8"));
  }

  @Test
  void badArgumentsAreNamed() throws Exception {
    String dir = HfRunTest.QWEN2.toString();
    assertTrue(fails("generate", "--model", "/nonexistent", "--prompt", "x")
        .contains("--model: /nonexistent is neither a directory nor a checkpoint reference"));
    assertTrue(fails("generate", "--model", dir, "--prompt", "x", "--top-p", "2")
        .contains("topP must be in (0, 1]"));
    assertTrue(fails("generate", "--model", dir, "--prompt", "x", "--max-new-tokens", "300")
        .contains("max_position_embeddings 256"));
    assertTrue(fails("generate", "--model", dir).contains("--prompt"));
    Path store = tmp.resolve("store");
    String missing = "sha256:" + "0".repeat(64);
    assertTrue(fails("generate", "--model", missing, "--prompt", "x", "--artifacts",
        store.toString()).contains("is not in the store"));
    assertTrue(fails("export", "not-a-ref", "--out", tmp.resolve("o").toString(), "--artifacts",
        store.toString()).contains("not an artifact reference"));
    // a directory without safetensors: refused naming the file
    Path broken = tmp.resolve("broken");
    Files.createDirectories(broken);
    Files.copy(HfRunTest.QWEN2.resolve("config.json"), broken.resolve("config.json"));
    String err = fails("generate", "--model", broken.toString(), "--prompt", "x");
    assertTrue(err.startsWith("whale: ") && err.contains(broken.toString()), err);
  }

  @Test
  void demoChecksTheModelDirectoryBeforeTheRunStarts() throws Exception {
    Path spec = tmp.resolve("hf.json");
    Path missingDir = tmp.resolve("no-such-model");
    Files.writeString(spec, "{\"model\": {\"source\": \"huggingface\", \"path\": \""
        + missingDir + "\"}, \"rsft\": {\"finetune\": \"lora\"}}");
    String err = fails("demo", "--spec", spec.toString(), "--artifacts",
        tmp.resolve("a").toString());
    assertTrue(err.contains("model.path: " + missingDir + " is not a directory"), err);
    Files.writeString(spec, "{\"model\": {\"source\": \"huggingface\", \"path\": \"x\", "
        + "\"dtype\": \"float16\"}, \"rsft\": {\"finetune\": \"full\"}}");
    err = fails("demo", "--spec", spec.toString(), "--artifacts", tmp.resolve("a").toString());
    assertTrue(err.contains("model.dtype: float16 holds the frozen base under rsft.finetune lora, "
        + "but rsft.finetune is full"), err);
  }

  @Test
  void theExampleSpecIsValidAndNamesAFixture() throws Exception {
    var spec = whale.workflows.SpecJson.parse(Files.readString(Path.of("../examples/hf-lora.json")));
    assertEquals(whale.workflows.Finetune.LORA, spec.finetune());
    // relative to the repository root, where `whale demo --spec examples/hf-lora.json` runs
    whale.activities.HfPolicy.checkDirectory(Path.of("..").resolve(spec.model().path()));
  }

  private static List<Integer> ints(JsonNode a) {
    List<Integer> out = new ArrayList<>();
    a.forEach(x -> out.add(x.asInt()));
    return out;
  }
}
