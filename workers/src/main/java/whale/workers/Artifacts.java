package whale.workers;

import java.nio.file.Path;
import picocli.CommandLine.Option;
import whale.store.ArtifactStore;

/**
 * The artifact store options every command shares: {@code --artifacts} a directory (on several
 * machines, one they all mount) or {@code s3://bucket/prefix}, and for S3 this machine's cache.
 */
final class Artifacts {
  @Option(names = "--artifacts", paramLabel = "DIR|s3://BUCKET/PREFIX",
      description = "Artifact store: a directory, or s3://bucket/prefix shared by workers on "
          + "separate machines (endpoint and credentials from the AWS SDK's chain: AWS_ENDPOINT_URL, "
          + "AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, profiles). "
          + "Default: $WHALE_ARTIFACTS or ./whale-artifacts.")
  String location;

  @Option(names = "--cache", paramLabel = "DIR",
      description = "This machine's cache of an S3 store (default: $WHALE_CACHE or "
          + "~/.cache/whale/artifacts); at most $WHALE_CACHE_MAX_GB (default 50) GB, least recently "
          + "used out.")
  Path cache;

  String location() {
    if (location != null) {
      return location;
    }
    String env = System.getenv("WHALE_ARTIFACTS");
    return env == null || env.isBlank() ? "whale-artifacts" : env;
  }

  /** Opens the store; an S3 store is checked here, so a wrong bucket or key fails at start. */
  ArtifactStore open() {
    return ArtifactStore.open(location(), cacheDir(), cacheMaxBytes());
  }

  private Path cacheDir() {
    if (cache != null) {
      return cache;
    }
    String env = System.getenv("WHALE_CACHE");
    return env == null || env.isBlank()
        ? Path.of(System.getProperty("user.home"), ".cache", "whale", "artifacts") : Path.of(env);
  }

  private static long cacheMaxBytes() {
    String env = System.getenv("WHALE_CACHE_MAX_GB");
    double gb;
    try {
      gb = env == null || env.isBlank() ? 50 : Double.parseDouble(env);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("WHALE_CACHE_MAX_GB=" + env + " is not a number of GB");
    }
    return (long) (gb * 1024 * 1024 * 1024);
  }
}
