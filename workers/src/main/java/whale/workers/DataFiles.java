package whale.workers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.stream.Stream;
import whale.activities.HfPolicy;
import whale.activities.TaskCatalog;
import whale.workflows.ExperimentSpec;
import whale.store.S3Remote;
import whale.workflows.activities.TaskRef;

/**
 * Reads a spec's dataset files (and checks a Hugging Face model directory) before its run starts, so that a malformed line fails the command at
 * once with "file:line: reason" instead of inside the run (where the workers would find it only
 * after the base model was pretrained).
 */
final class DataFiles {
  private DataFiles() {}

  /**
   * Loads the spec's task from its files exactly as a worker will (same loader, same checks).
   *
   * @param required whether the files must be readable here (in-process commands); otherwise files
   *     this machine cannot see are left to the workers
   */
  static void check(ExperimentSpec spec, boolean required) {
    if (spec.model().usesHuggingFace()) {
      // the same check the first activity makes, so a typo fails now, not after a worker picks it up
      // a model.name is fetched here only for in-process commands; workers fetch their own
      if (spec.model().name() != null) {
        if (required) {
          try {
            HfPolicy.checkDirectory(HfPolicy.modelDirectory(spec.model(), System.out));
          } catch (IOException e) {
            throw new IllegalArgumentException("model.name " + spec.model().name() + ": "
                + e.getMessage(), e);
          }
        }
      } else {
        // a model in object storage (s3://…) is fetched and checked by each worker
        Path dir = S3Remote.isS3(spec.model().path()) ? null : Path.of(spec.model().path());
        if (dir != null && (required || Files.exists(dir))) {
          try {
            HfPolicy.checkDirectory(dir);
          } catch (IOException e) {
            throw new IllegalArgumentException("model.path: " + e.getMessage(), e);
          }
        }
      }
    }
    TaskRef ref = TaskRef.of(spec);
    if (ref.builtin()) {
      return;
    }
    boolean readable = Stream.of(ref.trainFile(), ref.testFile(), ref.corpusFile())
        .filter(Objects::nonNull).allMatch(f -> Files.isReadable(Path.of(f)));
    if (readable || required) {
      TaskCatalog.create(ref); // throws on the first malformed line, naming file and line
    }
  }
}
