package whale.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code model.path: s3://…}: a Hugging Face directory in a bucket, fetched once per machine. The
 * endpoint and keys come the way a worker's do, from the SDK's chain (here its system properties).
 */
class S3ModelsTest {
  static S3ProxyProcess s3;

  @BeforeAll
  static void startServer(@TempDir Path dir) throws IOException {
    s3 = new S3ProxyProcess(dir, "models");
    System.setProperty("aws.endpointUrl", s3.endpoint());
    System.setProperty("aws.accessKeyId", S3ProxyProcess.IDENTITY);
    System.setProperty("aws.secretAccessKey", S3ProxyProcess.CREDENTIAL);
  }

  @AfterAll
  static void stopServer() throws InterruptedException {
    System.clearProperty("aws.endpointUrl");
    System.clearProperty("aws.accessKeyId");
    System.clearProperty("aws.secretAccessKey");
    s3.close();
  }

  @Test
  void aModelDirectoryInABucketIsFetchedOnceIntoTheModelCache(@TempDir Path cache)
      throws IOException {
    try (Remote r = s3.remote("s3://models/smol")) {
      r.put("config.json", "{\"model_type\":\"llama\"}".getBytes());
      r.put("tokenizer.json", "{}".getBytes());
      r.put("sub/extra.txt", "nested".getBytes());
    }
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Path dir = S3Models.fetch("s3://models/smol/", cache, new PrintStream(log, true));
    assertEquals("{\"model_type\":\"llama\"}", Files.readString(dir.resolve("config.json")));
    assertEquals("nested", Files.readString(dir.resolve("sub/extra.txt")));
    assertTrue(log.toString().contains("fetched s3://models/smol/ (3 files"), log.toString());
    try (Stream<Path> s = Files.list(dir.getParent())) {
      assertEquals(1, s.count(), "no temporary directory left beside it");
    }
    // the second call reads the cache: the bucket may even be gone
    try (Remote r = s3.remote("s3://models/smol")) {
      r.delete("config.json");
    }
    assertEquals(dir, S3Models.fetch("s3://models/smol/", cache, new PrintStream(log, true)));
  }

  @Test
  void aPrefixWithoutAModelSaysSo(@TempDir Path cache) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> S3Models.fetch("s3://models/empty", cache, System.err));
    assertTrue(e.getMessage().contains("s3://models/empty holds no config.json"), e.getMessage());
  }
}
