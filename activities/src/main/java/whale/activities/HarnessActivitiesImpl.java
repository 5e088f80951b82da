package whale.activities;

import com.fasterxml.jackson.core.type.TypeReference;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import whale.harness.ArchiveView;
import whale.harness.EpisodeResult;
import whale.harness.HarnessCandidate;
import whale.harness.HarnessCompiler;
import whale.harness.TemplateProposer;
import whale.harness.TraceStats;
import whale.store.ArtifactStore;
import whale.task.Task;
import whale.workflows.activities.ArchiveEntry;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.TaskRef;

/**
 * Harness code: the task's starting harness, and Meta-Harness proposals. Before proposing, the
 * phase's archive is written out as a directory tree (per candidate: source, metadata, scores,
 * traces), which is what a proposer reads.
 */
public class HarnessActivitiesImpl implements HarnessActivities {
  private final ActivityRuntime runtime;

  public HarnessActivitiesImpl(ActivityRuntime runtime) {
    this.runtime = runtime;
  }

  @Override
  public CandidateInfo initialHarness(TaskRef taskRef) {
    runtime.task(taskRef); // rejects an unknown task before anything is stored
    return validated(new HarnessCandidate("h0-qa-direct",
        "the task's starting harness: the pretraining format, ask once, parse the first integer",
        "none (starting point)", "initial", TemplateProposer.initialHarnessSource()));
  }

  @Override
  public List<CandidateInfo> propose(ProposeRequest req) {
    if (!"template".equals(req.proposer())) {
      throw new IllegalArgumentException("unknown proposer '" + req.proposer()
          + "'; available: template");
    }
    if (req.candidates() < 1) {
      throw new IllegalArgumentException("propose: candidates must be at least 1");
    }
    return Memo.once(runtime.store(), "propose", req, CandidateList.class, () -> {
      Task task = runtime.task(req.task());
      List<whale.harness.ArchiveEntry> view = new ArrayList<>();
      for (ArchiveEntry e : req.archive()) {
        CandidateInfo c = e.candidate();
        String source = runtime.store().getString(c.sourceRef());
        if (e.score() == null) {
          view.add(whale.harness.ArchiveEntry.invalid(c.name(), source,
              c.error() == null ? "not scored" : c.error()));
        } else {
          view.add(whale.harness.ArchiveEntry.scored(c.name(), source,
              TraceStats.of(traces(e.score().tracesRef()), task)));
        }
      }
      writeArchive(req, view);
      List<HarnessCandidate> proposed =
          new TemplateProposer().propose(new ArchiveView(view), req.candidates(), req.seed());
      CandidateList out = new CandidateList();
      for (HarnessCandidate h : proposed) {
        out.add(validated(h));
      }
      return out;
    });
  }

  /** Memo needs a concrete type for a list of candidates. */
  static final class CandidateList extends ArrayList<CandidateInfo> {}

  private CandidateInfo validated(HarnessCandidate h) {
    String ref = runtime.store().putString(h.source());
    HarnessCompiler.Result r = runtime.compiler().tryCompile(h.source());
    return new CandidateInfo(h.name(), h.hypothesis(), h.changes(), h.axis(), ref, r.ok(),
        r.ok() ? null : r.errorText());
  }

  private List<EpisodeResult> traces(String ref) {
    try {
      return ArtifactStore.json().readValue(runtime.store().path(ref).toFile(),
          new TypeReference<List<EpisodeResult>>() {});
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read traces " + ref, e);
    }
  }

  /** archives/<workflow>/round-N/<iteration>-<name>/{source.java,meta.json,scores.json,traces.json}. */
  private void writeArchive(ProposeRequest req, List<whale.harness.ArchiveEntry> view) {
    Path dir = runtime.store().namedDir("archives/" + req.phaseKey().replaceAll("[^A-Za-z0-9._/-]", "_"));
    List<Map<String, Object>> summary = new ArrayList<>();
    for (int i = 0; i < req.archive().size(); i++) {
      ArchiveEntry e = req.archive().get(i);
      CandidateInfo c = e.candidate();
      Path cd = dir.resolve(String.format("%02d-%02d-%s", e.iteration(), i,
          c.name().replaceAll("[^A-Za-z0-9._-]", "_")));
      ArtifactStore.writeAtomically(cd.resolve("source.java"),
          view.get(i).source().getBytes(StandardCharsets.UTF_8));
      Map<String, Object> meta = new LinkedHashMap<>();
      meta.put("name", c.name());
      meta.put("hypothesis", c.hypothesis());
      meta.put("changes", c.changes());
      meta.put("axis", c.axis());
      meta.put("iteration", e.iteration());
      meta.put("valid", c.valid());
      meta.put("error", c.error());
      meta.put("sourceRef", c.sourceRef());
      writeJson(cd.resolve("meta.json"), meta);
      if (e.score() != null) {
        writeJson(cd.resolve("scores.json"), Map.of(
            "success", e.score().meanAtK(), "meanTurns", e.score().meanTurns(),
            "rollouts", e.score().rollouts(), "traceStats", view.get(i).traceStats()));
        Path traces = cd.resolve("traces.json");
        if (!Files.exists(traces)) {
          ArtifactStore.writeAtomically(traces, runtime.store().getBytes(e.score().tracesRef()));
        }
      }
      Map<String, Object> row = new LinkedHashMap<>(meta);
      row.put("success", e.score() == null ? null : e.score().meanAtK());
      row.put("meanTurns", e.score() == null ? null : e.score().meanTurns());
      summary.add(row);
    }
    writeJson(dir.resolve("summary.json"), summary);
  }

  private static void writeJson(Path p, Object value) {
    try {
      ArtifactStore.writeAtomically(p, ArtifactStore.json().writeValueAsBytes(value));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
