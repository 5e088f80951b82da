package whale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.failure.ApplicationFailure;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import whale.model.SftExample;
import whale.model.hf.HfModel;
import whale.store.ArtifactStore;
import whale.store.Remote;
import whale.store.S3ProxyProcess;
import whale.workflows.ExperimentSpec;
import whale.workflows.SpecValidator;
import whale.workflows.activities.BaseModelRequest;

/**
 * A Hugging Face run with nothing on a shared disk: the model at {@code model.path: s3://…}, the
 * artifacts in a bucket, two workers with caches of their own (S3Proxy as a process; endpoint and
 * keys through the SDK's chain, here its system properties).
 */
class HfPolicyS3Test {
  @TempDir static Path tmp;
  static S3ProxyProcess s3;

  @BeforeAll
  static void startServer() throws Exception {
    s3 = new S3ProxyProcess(tmp.resolve("s3"), "models", "runs");
    System.setProperty("aws.endpointUrl", s3.endpoint());
    System.setProperty("aws.accessKeyId", S3ProxyProcess.IDENTITY);
    System.setProperty("aws.secretAccessKey", S3ProxyProcess.CREDENTIAL);
    System.setProperty("whale.models", tmp.resolve("models").toString());
    try (Remote r = s3.remote("s3://models/qwen2")) {
      try (var files = Files.list(HfPolicyTest.fixture("qwen2"))) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          r.put(f.getFileName().toString(), Files.readAllBytes(f));
        }
      }
    }
  }

  @AfterAll
  static void stopServer() throws Exception {
    for (String p : List.of("aws.endpointUrl", "aws.accessKeyId", "aws.secretAccessKey",
        "whale.models")) {
      System.clearProperty(p);
    }
    s3.close();
  }

  static BaseModelRequest request(String path) {
    ExperimentSpec spec = new ExperimentSpec(null, null, 3L, null, null,
        ExperimentSpec.ModelSpec.ofHuggingFace(path), null, null, null, null, null, null, null,
        null);
    assertEquals(List.of(), SpecValidator.problems(spec));
    return BaseModelRequest.of(spec, HfPolicyTest.TASK, 11);
  }

  @Test
  void aModelInABucketTrainsOnOneWorkerAndItsStepLoadsOnAnother() throws Exception {
    ArtifactStore gpu = new ArtifactStore(tmp.resolve("cache-gpu"), s3.remote("s3://runs/r"), 0);
    String base = new WeightActivitiesImpl(ActivityRuntime.open(gpu, ActivityRuntime.Mode.IN_PROCESS))
        .prepareBaseModel(request("s3://models/qwen2"));
    assertTrue(gpu.getString(base).contains("\"s3://models/qwen2\""),
        "the base names the bucket, so every worker fetches its own copy: " + gpu.getString(base));
    Path local = HfPolicy.baseDir(gpu, base);
    assertTrue(local.startsWith(tmp.resolve("models").resolve("s3")), local.toString());
    List<SftExample> ex = List.of(new SftExample("Q: 1+1\nA:", " 2\n"));
    String step;
    try (HfModel m = HfPolicy.loadForTraining(gpu, base)) {
      m.sft(ex, 1, 1e-2f, 1);
      step = HfPolicy.save(gpu, m);
    }
    ArtifactStore eval = new ArtifactStore(tmp.resolve("cache-eval"), s3.remote("s3://runs/r"), 0);
    try (HfModel m = HfPolicy.loadForSampling(eval, step)) {
      assertTrue(m.decoder().adapters().size() > 0, "the trained adapter came through S3");
    }

    // the bucket's model replaced after the run started: a machine fetching it now refuses
    try (Remote r = s3.remote("s3://models/qwen2")) {
      r.put("config.json", Files.readAllBytes(HfPolicyTest.fixture("qwen3").resolve("config.json")));
    }
    try (var files = Files.walk(tmp.resolve("models"))) {
      for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(f); // a machine that never fetched it
      }
    }
    ApplicationFailure f = assertThrows(ApplicationFailure.class,
        () -> HfPolicy.loadForSampling(eval, base));
    assertTrue(f.isNonRetryable());
    assertTrue(f.getOriginalMessage().startsWith("model.path: " + local), f.getOriginalMessage());
  }
}
