package whale.workflows;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks an {@link ExperimentSpec} before anything runs. Pure: used by the CLI before starting a
 * workflow and by the workflow itself as its first act (a spec started with {@code temporal workflow
 * start} never went through the CLI).
 */
public final class SpecValidator {
  /** Each task and the data formats it reads ({@code builtin}: its own generator). */
  public static final Map<String, Set<String>> FORMATS = Map.of(
      "math", Set.of("builtin", "gsm8k", "math"),
      "chess", Set.of("builtin", "lichess"),
      "searchqa", Set.of("builtin", "jsonl"));
  public static final Set<String> TASKS = FORMATS.keySet();
  public static final Set<String> SOURCES = Set.of("builtin", "huggingface");
  /** The modules LoRA adapts (whale.model.hf.LoraAdapters.TARGETS; a test keeps them equal). */
  public static final Set<String> LORA_TARGETS =
      Set.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");

  private final List<String> problems = new ArrayList<>();

  private SpecValidator() {}

  /** All problems, each naming its field; empty when the spec is valid. */
  public static List<String> problems(ExperimentSpec s) {
    SpecValidator v = new SpecValidator();
    v.check(s);
    return List.copyOf(v.problems);
  }

  /** Returns the spec, or throws {@link InvalidSpecException} listing every problem. */
  public static ExperimentSpec validate(ExperimentSpec s) {
    List<String> p = problems(s);
    if (!p.isEmpty()) {
      throw new InvalidSpecException(p);
    }
    return s;
  }

  private void check(ExperimentSpec s) {
    unknown("", s.unknown());
    if (s.name().isBlank() || s.name().length() > 100) {
      problems.add("name: must be 1 to 100 characters, got '" + s.name() + "'");
    }
    oneOf("task", s.task(), TASKS);
    oneOf("schedule", s.schedule(), Schedule.class);

    var d = s.data();
    unknown("data.", d.unknown());
    range("data.weightProblems", d.weightProblems(), 8, 1_000_000);
    range("data.harnessProblems", d.harnessProblems(), 1, 100_000);
    range("data.testProblems", d.testProblems(), 1, 100_000);
    if (FORMATS.containsKey(s.task())) {
      oneOf("data.format", d.format(), FORMATS.get(s.task()));
    }
    if ("builtin".equals(d.format())) {
      for (String[] f : new String[][] {{"trainFile", d.trainFile()}, {"testFile", d.testFile()},
          {"corpusFile", d.corpusFile()}}) {
        if (f[1] != null) {
          problems.add("data." + f[0] + ": only read when data.format names a dataset format, "
              + "but data.format is builtin");
        }
      }
    } else {
      if (d.trainFile() == null || d.trainFile().isBlank()) {
        problems.add("data.trainFile: data.format " + d.format() + " needs a dataset file");
      }
      if ("searchqa".equals(s.task()) && (d.corpusFile() == null || d.corpusFile().isBlank())) {
        problems.add("data.corpusFile: searchqa with data.format " + d.format()
            + " needs the corpus the search tool indexes");
      }
    }

    if (d.judge() != null) {
      var j = d.judge();
      unknown("data.judge.", j.unknown());
      if (!"searchqa".equals(s.task())) {
        problems.add("data.judge: only the searchqa task has an LLM judge, the task is " + s.task());
      }
      if (!j.baseUrl().startsWith("http://") && !j.baseUrl().startsWith("https://")) {
        problems.add("data.judge.baseUrl: the judge needs an http(s) base URL, got '" + j.baseUrl() + "'");
      }
      if (j.model().isBlank()) {
        problems.add("data.judge.model: the judge needs a model name");
      }
      range("data.judge.timeoutSeconds", j.timeoutSeconds(), 1, 3600);
    }

    var r = s.rsft();
    // rsft.finetune as written (checked below), or its default for model.source
    String finetune = r.finetune() != null ? r.finetune()
        : (s.model().usesHuggingFace() ? Finetune.LORA : Finetune.FULL).json();
    boolean lora = Finetune.LORA.json().equals(finetune);

    var m = s.model();
    unknown("model.", m.unknown());
    range("model.contextLength", m.contextLength(), 32, 4096);
    range("model.dModel", m.dModel(), 8, 4096);
    range("model.layers", m.layers(), 1, 64);
    range("model.heads", m.heads(), 1, 64);
    if (m.heads() > 0 && m.dModel() % m.heads() != 0) {
      problems.add("model.heads: must divide model.dModel (" + m.dModel() + "), got " + m.heads());
    }
    range("model.pretrainSteps", m.pretrainSteps(), 0, 1_000_000);
    range("model.pretrainBatch", m.pretrainBatch(), 1, 4096);
    rangeOpenLow("model.pretrainLearningRate", m.pretrainLearningRate(), 0, 1);
    range("model.pretrainDocuments", m.pretrainDocuments(), 1, 10_000_000);
    String source = m.source() == null ? "builtin" : m.source();
    oneOf("model.source", source, SOURCES);
    if (m.usesHuggingFace()) {
      if (m.pretrainCorpus() != null) {
        problems.add("model.pretrainCorpus: only read when model.source is builtin (a Hugging Face "
            + "model is not pretrained by whale)");
      }
      // the directory itself is checked by the CLI and by the first activity (not pure)
      boolean hasPath = m.path() != null && !m.path().isBlank();
      boolean hasName = m.name() != null && !m.name().isBlank();
      if (hasPath == hasName) {
        problems.add("model.path: model.source huggingface needs either model.path (the model "
            + "directory) or model.name (a model whale fetches, see `whale models list`), "
            + (hasPath ? "not both" : "got neither"));
      }
      if (m.dtype().equals("bfloat16")) {
        problems.add("model.dtype: bfloat16 is not supported (DJL's PyTorch engine aborts on "
            + "bfloat16 tensors); bfloat16 checkpoints load as float32 or float16");
      } else {
        oneOf("model.dtype", m.dtype(), Dtype.class);
      }
      if (m.dtype().equals(Dtype.FLOAT16.json()) && !lora) {
        problems.add("model.dtype: float16 holds the frozen base under rsft.finetune lora, but "
            + "rsft.finetune is " + finetune + ": trainable parameters and AdamW moments stay "
            + "float32 (use model.dtype float32 for full fine-tuning)");
      }
      // cpu or cuda: whether the worker can reach a GPU is checked where the model loads
      oneOf("model.device", m.device(), Device.class);
    } else {
      if (m.pretrainCorpus() != null) {
        oneOf("model.pretrainCorpus", m.pretrainCorpus(), Set.of(ExperimentSpec.ModelSpec.CHAT_CORPUS));
        if (!"math".equals(s.task())) {
          problems.add("model.pretrainCorpus: the chat corpus exists for the math task only, the task is "
              + s.task());
        }
      }
      for (String[] f : new String[][] {{"path", m.path()}, {"name", m.name()}, {"dtype", m.dtype()},
          {"device", m.device()}}) {
        if (f[1] != null) {
          problems.add("model." + f[0] + ": only read when model.source is huggingface, but it is "
              + source);
        }
      }
    }

    unknown("rsft.", r.unknown());
    range("rsft.promptsPerStep", r.promptsPerStep(), 1, 100_000);
    range("rsft.samplesPerPrompt", r.samplesPerPrompt(), 1, 1024);
    range("rsft.temperature", r.temperature(), 0, 10);
    range("rsft.topK", r.topK(), 0, 100_000);
    range("rsft.acceptThreshold", r.acceptThreshold(), 0, 1);
    range("rsft.minibatch", r.minibatch(), 1, 100_000);
    rangeOpenLow("rsft.learningRate", r.learningRate(), 0, 1);
    if (r.finetune() != null) {
      oneOf("rsft.finetune", r.finetune(), Finetune.class);
    }
    if (lora && !m.usesHuggingFace()) {
      problems.add("rsft.finetune: lora needs model.source huggingface (the builtin model trains "
          + "all its weights)");
    }
    if (r.lora() != null) {
      var l = r.lora();
      unknown("rsft.lora.", l.unknown());
      if (!lora) {
        problems.add("rsft.lora: only read when rsft.finetune is lora, but it is " + finetune);
      }
      range("rsft.lora.rank", l.rank(), 1, 4096);
      rangeOpenLow("rsft.lora.alpha", l.alpha(), 0, 1_000_000);
      if (l.targets().isEmpty()) {
        problems.add("rsft.lora.targets: name at least one module of " + new TreeSet<>(LORA_TARGETS));
      }
      for (String t : l.targets()) {
        oneOf("rsft.lora.targets", t, LORA_TARGETS);
      }
      if (new HashSet<>(l.targets()).size() != l.targets().size()) {
        problems.add("rsft.lora.targets: a module is named twice: " + l.targets());
      }
    }
    if (r.promptsPerStep() > d.weightProblems()) {
      problems.add("rsft.promptsPerStep: must be at most data.weightProblems ("
          + d.weightProblems() + "), got " + r.promptsPerStep());
    }

    var p = s.phases();
    unknown("phases.", p.unknown());
    rangeOpenLow("phases.weightEpochsPerPhase", p.weightEpochsPerPhase(), 0, 1000);
    range("phases.harnessIterationsPerPhase", p.harnessIterationsPerPhase(), 1, 1000);
    rangeOpenLow("phases.weightBudgetEpochs", p.weightBudgetEpochs(), 0, 1000);
    range("phases.maxRounds", p.maxRounds(), 1, 30);
    rangeOpenLow("phases.windowEpochs", p.windowEpochs(), 0, 1000);
    range("phases.burnInEpochs", p.burnInEpochs(), 0, 1000);
    rangeOpenLow("phases.patienceEpochs", p.patienceEpochs(), 0, 1000);
    range("phases.harnessMinIterations", p.harnessMinIterations(), 1, 1000);
    range("phases.harnessPatience", p.harnessPatience(), 1, 1000);
    range("phases.harnessMaxIterations", p.harnessMaxIterations(), 1, 1000);
    if (p.harnessMaxIterations() < p.harnessMinIterations()) {
      problems.add("phases.harnessMaxIterations: must be at least phases.harnessMinIterations ("
          + p.harnessMinIterations() + "), got " + p.harnessMaxIterations());
    }

    var h = s.harness();
    unknown("harness.", h.unknown());
    oneOf("harness.proposer", h.proposer(), Proposer.class);
    range("harness.candidatesPerIteration", h.candidatesPerIteration(), 1, 64);
    range("harness.turnBudget", h.turnBudget(), 1, 16);
    range("harness.episodeTimeoutSeconds", h.episodeTimeoutSeconds(), 1, 3600);
    if (h.initialForm() != null) {
      oneOf("harness.initialForm", h.initialForm(), ExperimentSpec.HarnessSpec.INITIAL_FORMS);
      if (h.initialForm().equals("tools") && !"math".equals(s.task())) {
        problems.add("harness.initialForm: tools (the task's tools offered through the chat "
            + "template) exists for the math task only, the task is " + s.task());
      }
    }
    if (h.maxTemperature() != null) {
      range("harness.maxTemperature", h.maxTemperature(), 0, 10);
    }
    if (Proposer.OPENAI.json().equals(h.proposer())) {
      if (!h.openaiBaseUrl().startsWith("http://") && !h.openaiBaseUrl().startsWith("https://")) {
        problems.add("harness.openaiBaseUrl: the openai proposer needs an http(s) base URL, got '"
            + h.openaiBaseUrl() + "'");
      }
      if (h.openaiModel().isBlank()) {
        problems.add("harness.openaiModel: the openai proposer needs a model name");
      }
    }
    if (Proposer.COMMAND.json().equals(h.proposer())
        && (h.command().isEmpty() || h.command().get(0).isBlank())) {
      problems.add("harness.command: the command proposer needs a program to run");
    }
    range("harness.commandTimeoutSeconds", h.commandTimeoutSeconds(), 1, 86_400);

    var e = s.eval();
    unknown("eval.", e.unknown());
    range("eval.k", e.k(), 1, 1024);
    range("eval.everyEpochs", e.everyEpochs(), 0, 1000);

    var w = s.workflow();
    unknown("workflow.", w.unknown());
    range("workflow.continueAsNewAfter", w.continueAsNewAfter(), 0, 1_000_000);

    var c = s.checkpoints();
    unknown("checkpoints.", c.unknown());
    if (c.keepLast() < 1) {
      problems.add("checkpoints.keepLast: must be an integer >= 1, got " + c.keepLast());
    }

    var ro = s.rollouts();
    if (ro != null) {
      unknown("rollouts.", ro.unknown());
      oneOf("rollouts.backend", ro.backend(), Spelled.spellings(whale.workflows.activities.Rollouts.Backend.class));
      for (String url : ro.servers()) {
        java.net.URI u;
        try {
          u = java.net.URI.create(url);
        } catch (IllegalArgumentException bad) {
          u = null;
        }
        if (u == null || u.getHost() == null || !("http".equals(u.getScheme()) || "https".equals(u.getScheme()))) {
          problems.add("rollouts.servers: not an http(s) URL of a vLLM server: '" + url + "'");
        }
      }
      if (ro.timeoutSeconds() != null) {
        range("rollouts.timeoutSeconds", ro.timeoutSeconds(), 1, 86_400);
      }
      if (ro.maxConcurrentRequests() != null) {
        range("rollouts.maxConcurrentRequests", ro.maxConcurrentRequests(), 1, 4096);
      }
      if (ro.probeTolerance() != null && !(ro.probeTolerance() > 0 && ro.probeTolerance() < 10)) {
        problems.add("rollouts.probeTolerance: must be in (0, 10) nats, got " + ro.probeTolerance());
      }
      if (ro.vllm() && !s.model().usesHuggingFace()) {
        problems.add("rollouts.backend: vllm serves a Hugging Face model, but the model is the builtin "
            + "character model (model.source huggingface, or rollouts.backend local)");
      }
      if (ro.vllm() && s.finetune() == Finetune.FULL) {
        // a full step's weights would have to replace the server's (a restart of a minute or
        // more per step, or reload_weights, which has returned stale weights: vllm#32718)
        problems.add("rollouts.backend: vllm takes each RSFT step as a LoRA adapter; rsft.finetune "
            + "full is not supported with it (use lora, or rollouts.backend local)");
      }
      if (!ro.vllm() && !ro.servers().isEmpty()) {
        problems.add("rollouts.servers: only read when rollouts.backend is vllm");
      }
    }
  }

  private void unknown(String prefix, Map<String, Object> unknown) {
    for (String k : new TreeSet<>(unknown.keySet())) {
      problems.add(prefix + k + ": unknown field");
    }
  }

  private void oneOf(String field, String value, Set<String> allowed) {
    if (!allowed.contains(value)) {
      problems.add(field + ": must be one of " + new TreeSet<>(allowed) + ", got '" + value + "'");
    }
  }

  private <E extends Enum<E> & Spelled> void oneOf(String field, String value, Class<E> closed) {
    if (Spelled.find(closed, value).isEmpty()) {
      problems.add(field + ": must be one of " + Spelled.spellings(closed) + ", got '" + value
          + "'");
    }
  }

  private void range(String field, long value, long min, long max) {
    if (value < min || value > max) {
      problems.add(field + ": must be in [" + min + ", " + max + "], got " + value);
    }
  }

  private void range(String field, double value, double min, double max) {
    if (!(value >= min && value <= max)) {
      problems.add(field + ": must be in [" + min + ", " + max + "], got " + value);
    }
  }

  private void rangeOpenLow(String field, double value, double min, double max) {
    if (!(value > min && value <= max)) {
      problems.add(field + ": must be in (" + min + ", " + max + "], got " + value);
    }
  }
}
