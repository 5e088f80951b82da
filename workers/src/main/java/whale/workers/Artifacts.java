package whale.workers;

import java.nio.file.Path;

final class Artifacts {
  private Artifacts() {}

  static Path dir(Path flag) {
    if (flag != null) {
      return flag;
    }
    String env = System.getenv("WHALE_ARTIFACTS");
    return Path.of(env == null || env.isBlank() ? "whale-artifacts" : env);
  }
}
