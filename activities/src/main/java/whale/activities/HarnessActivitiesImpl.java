package whale.activities;

import com.fasterxml.jackson.core.type.TypeReference;
import io.temporal.failure.ApplicationFailure;
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
import whale.task.math.MathGenome;
import whale.harness.PromptOnlyCheck;
import whale.harness.TraceStats;
import whale.proposers.CommandProposer;
import whale.proposers.OpenAiProposer;
import whale.workflows.ExperimentSpec;
import java.time.Duration;
import whale.store.ArtifactStore;
import whale.task.Task;
import whale.workflows.activities.ArchiveEntry;
import whale.workflows.activities.CandidateInfo;
import whale.workflows.activities.HarnessActivities;
import whale.workflows.activities.ProposeRequest;
import whale.workflows.activities.TaskRef;
import whale.workflows.schedule.ParetoAcceptance;
import whale.harness.HarnessForm;
import whale.workflows.Proposer;
import whale.workflows.Spelled;

/**
 * Harness code: the task's starting harness, and Meta-Harness proposals. Before proposing, the
 * phase's archive is written out as a directory tree (per candidate: source, metadata, scores,
 * traces), which is what a proposer reads.
 */
public class HarnessActivitiesImpl implements HarnessActivities {
  /** What a prompt-only (Fast-Slow control) proposer is told, in the archive's CONSTRAINTS.md. */
  static final String PROMPT_ONLY_RULE = """
      # Constraint for this phase: prompt text only (Fast-Slow control)

      Candidates may change ONLY the text of string literals of the incoming harness (incoming.java):
      the prompts. Any other difference (code, constants, control flow, parsing, turn use) is rejected
      by the validator and recorded as an invalid candidate. The class name may change.
      """;

  private final ActivityRuntime runtime;

  public HarnessActivitiesImpl(ActivityRuntime runtime) {
    this.runtime = runtime;
  }

  @Override
  public CandidateInfo initialHarness(TaskRef taskRef, String form) {
    return ActivityHeartbeat.during("initial harness", () -> {
      runtime.task(taskRef); // rejects an unknown task before anything is stored
      HarnessForm f;
      try {
        f = form == null ? HarnessForm.COMPLETION
            : HarnessForm.valueOf(form.toUpperCase(java.util.Locale.ROOT));
        return validated(TaskCatalog.templates(taskRef.name()).initial(f));
      } catch (IllegalArgumentException e) {
        // the spec validator rejects these first; a worker asked anyway fails the run for good
        throw ApplicationFailure.newNonRetryableFailureWithCause("harness.initialForm: "
            + e.getMessage(), "InvalidSpec", e);
      }
    });
  }

  @Override
  public List<CandidateInfo> propose(ProposeRequest req) {
    if (req.proposer() == null) {
      throw new IllegalArgumentException("unknown proposer 'null'; available: "
          + String.join(", ", Spelled.inOrder(Proposer.class)));
    }
    if (req.candidates() < 1) {
      throw new IllegalArgumentException("propose: candidates must be at least 1");
    }
    // a command or LLM proposer may take minutes without a checkpoint
    return ActivityHeartbeat.during("propose", () -> proposeOnce(req));
  }

  private List<CandidateInfo> proposeOnce(ProposeRequest req) {
    return Memo.once(runtime.store(), Memo.Kind.PROPOSE, req, CandidateList.class, () -> {
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
      Path dir = writeArchive(req, view);
      String incoming = req.promptOnly() ? runtime.store().getString(req.incomingRef()) : null;
      if (req.promptOnly()) {
        // The proposer is told: every proposer reads the archive directory.
        ArtifactStore.writeAtomically(dir.resolve("CONSTRAINTS.md"), PROMPT_ONLY_RULE
            .getBytes(StandardCharsets.UTF_8));
        ArtifactStore.writeAtomically(dir.resolve("incoming.java"),
            incoming.getBytes(StandardCharsets.UTF_8));
      }
      List<HarnessCandidate> proposed = proposeWith(req, view, dir);
      CandidateList out = new CandidateList();
      for (HarnessCandidate h : proposed) {
        CandidateInfo c = validated(h);
        String drift = incoming == null || !c.valid() ? null : PromptOnlyCheck.problem(incoming, h.source());
        out.add(drift == null ? c : new CandidateInfo(c.name(), c.hypothesis(), c.changes(), c.axis(),
            c.sourceRef(), false, drift));
      }
      return out;
    });
  }

  private List<HarnessCandidate> proposeWith(ProposeRequest req, List<whale.harness.ArchiveEntry> view,
      Path dir) {
    ExperimentSpec.HarnessSpec h = req.harness() == null ? ExperimentSpec.HarnessSpec.defaults() : req.harness();
    return switch (req.proposer()) {
      case OPENAI -> new OpenAiProposer(h.openaiBaseUrl(), h.openaiModel(),
          h.openaiApiKeyEnv().isBlank() ? null : System.getenv(h.openaiApiKeyEnv()),
          Duration.ofSeconds(h.commandTimeoutSeconds())).propose(dir, req.candidates(), req.seed());
      case COMMAND -> new CommandProposer(h.command(), Duration.ofSeconds(h.commandTimeoutSeconds()))
          .propose(dir, runtime.store().namedDir("proposer-work"), req.candidates(), req.iteration(), req.seed());
      case TEMPLATE -> TaskCatalog.templates(req.task().name())
          .propose(new ArchiveView(view), req.candidates(), req.seed(), req.promptOnly(), h.chatForm());
    };
  }

  /** Memo needs a concrete type for a list of candidates. */
  static final class CandidateList extends ArrayList<CandidateInfo> {}

  private CandidateInfo validated(HarnessCandidate h) {
    String ref = runtime.store().putString(h.source());
    // compiled in a sandbox (bounded memory and time), never in this worker JVM
    String errors = runtime.episodes().checkHarness(h.source());
    return new CandidateInfo(h.name(), h.hypothesis(), h.changes(), h.axis(), ref, errors == null, errors);
  }

  private List<EpisodeResult> traces(String ref) {
    try {
      return ArtifactStore.json().readValue(runtime.store().path(ref).toFile(),
          new TypeReference<List<EpisodeResult>>() {});
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read traces " + ref, e);
    }
  }

  /**
   * archives/<workflow>/round-N/: per candidate <iteration>-<index>-<name>/{source.java, meta.json,
   * scores.json, traces.json (every episode: each model call's prompt and completion, each tool call,
   * the answer, the status and the verifier's reward)}; summary.json (all candidates) and pareto.json
   * (the Pareto front).
   */
  private Path writeArchive(ProposeRequest req, List<whale.harness.ArchiveEntry> view) {
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
      row.put("dir", cd.getFileName().toString());
      row.put("success", e.score() == null ? null : e.score().meanAtK());
      row.put("meanTurns", e.score() == null ? null : e.score().meanTurns());
      summary.add(row);
    }
    writeJson(dir.resolve("summary.json"), summary);
    writeJson(dir.resolve("pareto.json"), paretoFront(summary));
    return dir;
  }

  /**
   * The Pareto front of the scored candidates (success up, mean turns down): every candidate no other
   * candidate dominates (at least as good on both, better on one), best success first.
   */
  static Map<String, Object> paretoFront(List<Map<String, Object>> summary) {
    // The same front the acceptance rule picks from: one definition of dominance.
    List<ParetoAcceptance.Scored> scored = new ArrayList<>();
    for (int i = 0; i < summary.size(); i++) {
      Map<String, Object> r = summary.get(i);
      if (r.get("success") != null) {
        scored.add(new ParetoAcceptance.Scored(Integer.toString(i), (Double) r.get("success"),
            (Double) r.get("meanTurns"), i));
      }
    }
    List<Map<String, Object>> front = new ArrayList<>();
    for (ParetoAcceptance.Scored p : ParetoAcceptance.paretoFront(scored)) {
      Map<String, Object> a = summary.get(p.order());
      Map<String, Object> f = new LinkedHashMap<>();
      for (String k : List.of("name", "dir", "iteration", "axis", "hypothesis", "success", "meanTurns")) {
        f.put(k, a.get(k));
      }
      front.add(f);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("objectives", List.of("success (maximize)", "meanTurns (minimize)"));
    out.put("candidates", summary.size());
    out.put("scored", scored.size());
    out.put("front", front);
    return out;
  }

  private static void writeJson(Path p, Object value) {
    try {
      ArtifactStore.writeAtomically(p, ArtifactStore.json().writeValueAsBytes(value));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
