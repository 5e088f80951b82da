package whale.workflows;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * One WHALE experiment, as written in a spec file ({@code examples/math.json}) and passed as the
 * workflow's input. Every field may be left out; the defaults are the method doc's settings where it
 * has one and small CPU-sized values where it does not. Unknown fields are collected (not ignored) so
 * that {@link SpecValidator} can reject them by name.
 */
public record ExperimentSpec(
    String name,
    String task,
    Long seed,
    String schedule,
    DataSpec data,
    ModelSpec model,
    RsftSpec rsft,
    PhaseSpec phases,
    HarnessSpec harness,
    EvalSpec eval,
    WorkflowSpec workflow,
    CheckpointSpec checkpoints,
    @JsonInclude(JsonInclude.Include.NON_NULL) whale.workflows.activities.Rollouts rollouts,
    @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {

  public ExperimentSpec {
    name = name == null ? "whale" : name;
    task = task == null ? "math" : task;
    seed = seed == null ? 1L : seed;
    schedule = schedule == null ? Schedule.WHALE.json() : schedule;
    data = data == null ? DataSpec.defaults() : data;
    model = model == null ? ModelSpec.defaults() : model;
    rsft = rsft == null ? RsftSpec.defaults() : rsft;
    phases = phases == null ? PhaseSpec.defaults() : phases;
    harness = harness == null ? HarnessSpec.defaults() : harness;
    eval = eval == null ? EvalSpec.defaults() : eval;
    workflow = workflow == null ? WorkflowSpec.defaults() : workflow;
    checkpoints = checkpoints == null ? CheckpointSpec.defaults() : checkpoints;
    unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
  }

  public static ExperimentSpec defaults() {
    return new ExperimentSpec(null, null, null, null, null, null, null, null, null, null, null, null,
        null, null);
  }

  /**
   * {@link #schedule} as the closed set it is; for a valid spec ({@link SpecValidator} checks the
   * spelling, so that a workflow started with a bad one fails naming it rather than failing to
   * decode its input: the record keeps the string as written).
   */
  public Schedule scheduleKind() {
    return Schedule.of(schedule);
  }

  /** The same spec under another schedule and seed (a comparison's cell). */
  public ExperimentSpec withScheduleAndSeed(String newSchedule, long newSeed) {
    return new ExperimentSpec(name, task, newSeed, newSchedule, data, model, rsft, phases, harness,
        eval, workflow, checkpoints, rollouts, unknown);
  }

  /**
   * The task's data: generator seed (fixed across training seeds so runs compare on the same
   * problems) and split sizes. D_harness is 256 problems in every domain of the paper.
   *
   * @param format {@code builtin} (the task's generator) or the name of a dataset file format the
   *     task can load (math: gsm8k, math; chess: lichess; searchqa: jsonl)
   * @param trainFile dataset file D_weight and D_harness are drawn from (seeded, disjoint)
   * @param testFile dataset file D_test is drawn from (absent: drawn from trainFile too)
   * @param corpusFile searchqa: the documents the search tool indexes
   * @param judge searchqa: an LLM judge for answers exact match rejects; absent: exact match only
   */
  public record DataSpec(
      Long seed,
      Integer weightProblems,
      Integer harnessProblems,
      Integer testProblems,
      String format,
      String trainFile,
      String testFile,
      String corpusFile,
      @JsonInclude(JsonInclude.Include.NON_NULL) JudgeSpec judge,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public DataSpec {
      seed = seed == null ? 1234L : seed;
      weightProblems = weightProblems == null ? 512 : weightProblems;
      harnessProblems = harnessProblems == null ? 256 : harnessProblems;
      testProblems = testProblems == null ? 128 : testProblems;
      format = format == null ? "builtin" : format;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static DataSpec defaults() {
      return new DataSpec(null, null, null, null, null, null, null, null, null, null);
    }
  }

  /**
   * An LLM judge on an OpenAI-compatible chat-completions endpoint, asked about answers that exact
   * match rejects (searchqa).
   *
   * @param baseUrl e.g. {@code http://localhost:8000/v1}
   * @param model the judge model's name
   * @param apiKeyEnv the name of the worker's environment variable holding the API key (never the key)
   * @param timeoutSeconds per request
   */
  public record JudgeSpec(
      String baseUrl,
      String model,
      String apiKeyEnv,
      Integer timeoutSeconds,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public JudgeSpec {
      baseUrl = baseUrl == null ? "" : baseUrl;
      model = model == null ? "" : model;
      apiKeyEnv = apiKeyEnv == null ? "OPENAI_API_KEY" : apiKeyEnv;
      timeoutSeconds = timeoutSeconds == null ? 60 : timeoutSeconds;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }
  }

  /**
   * The policy model: whale's small causal transformer with its seeded pretraining on the task's
   * generic format corpus ({@code source} builtin, the default), or a local Hugging Face
   * Llama/Qwen/Mistral directory taken as it is (no pretraining; the builtin size and pretraining
   * fields are then unused).
   *
   * @param source {@code builtin} (absent) or {@code huggingface}
   * @param path huggingface: the model directory (config.json, safetensors, tokenizer.json), which
   *     every gpu and eval worker must be able to read at this same path
   * @param name huggingface, instead of path: a model whale knows how to fetch ({@code whale models
   *     list}, for example {@code smollm2-135m-instruct}); each worker uses its own model cache
   *     ($WHALE_MODELS or ~/.cache/whale/models), fetching it there first if needed
   * @param dtype huggingface: the base weights' type: float32 (the default), or float16 for the
   *     frozen base under LoRA (adapters and their AdamW state stay float32)
   * @param device huggingface: where it runs: cpu (the default) or cuda
   * @param pretrainCorpus builtin: the pretraining corpus, absent for the task's generic one, or
   *     {@code chat} (math only) for one-step problems as tool-using conversations in the builtin
   *     chat template, so that the base model answers through chat harnesses and calls the task's
   *     calculator
   */
  public record ModelSpec(
      Integer contextLength,
      Integer dModel,
      Integer layers,
      Integer heads,
      Integer pretrainSteps,
      Integer pretrainBatch,
      Double pretrainLearningRate,
      Integer pretrainDocuments,
      // Absent for builtin (not defaulted), so a builtin spec's JSON, and the memo keys derived from
      // it, stay what they were before the Hugging Face fields existed.
      @JsonInclude(JsonInclude.Include.NON_NULL) String source,
      @JsonInclude(JsonInclude.Include.NON_NULL) String path,
      @JsonInclude(JsonInclude.Include.NON_NULL) String name,
      @JsonInclude(JsonInclude.Include.NON_NULL) String dtype,
      @JsonInclude(JsonInclude.Include.NON_NULL) String device,
      @JsonInclude(JsonInclude.Include.NON_NULL) String pretrainCorpus,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public static final String BUILTIN = "builtin";
    public static final String HUGGINGFACE = "huggingface";
    /** {@link #pretrainCorpus} value: the task's problems as tool-using chat conversations. */
    public static final String CHAT_CORPUS = "chat";

    public ModelSpec {
      contextLength = contextLength == null ? 160 : contextLength;
      dModel = dModel == null ? 64 : dModel;
      layers = layers == null ? 2 : layers;
      heads = heads == null ? 4 : heads;
      pretrainSteps = pretrainSteps == null ? 600 : pretrainSteps;
      pretrainBatch = pretrainBatch == null ? 64 : pretrainBatch;
      pretrainLearningRate = pretrainLearningRate == null ? 3e-3 : pretrainLearningRate;
      pretrainDocuments = pretrainDocuments == null ? 20000 : pretrainDocuments;
      if (HUGGINGFACE.equals(source)) {
        dtype = dtype == null ? Dtype.FLOAT32.json() : dtype;
        device = device == null ? Device.CPU.json() : device;
      }
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    /**
     * The builtin model of this size and pretraining (its Hugging Face fields do not apply): what
     * the learning tests and benchmarks vary.
     */
    public static ModelSpec builtin(int contextLength, int dModel, int layers, int heads,
        int pretrainSteps, int pretrainBatch, double pretrainLearningRate, int pretrainDocuments) {
      return new ModelSpec(contextLength, dModel, layers, heads, pretrainSteps, pretrainBatch,
          pretrainLearningRate, pretrainDocuments, null, null, null, null, null, null, null);
    }

    /** A Hugging Face model directory on the CPU in float32. */
    public static ModelSpec ofHuggingFace(String path) {
      return new ModelSpec(null, null, null, null, null, null, null, null, HUGGINGFACE, path, null,
          null, null, null, null);
    }

    /** A model whale fetches by name ({@link #name}) on the CPU in float32. */
    public static ModelSpec ofKnown(String name) {
      return new ModelSpec(null, null, null, null, null, null, null, null, HUGGINGFACE, null, name,
          null, null, null, null);
    }

    /** Whether the policy is a Hugging Face directory (otherwise the builtin transformer). */
    public boolean usesHuggingFace() {
      return HUGGINGFACE.equals(source);
    }

    /**
     * {@link #dtype} as the closed set it is (the record keeps the string as written, see
     * {@link ExperimentSpec#scheduleKind}); null for the builtin model.
     */
    public Dtype dtypeKind() {
      return dtype == null ? null : Dtype.of(dtype);
    }

    /** {@link #device} as the closed set it is; null for the builtin model. */
    public Device deviceKind() {
      return device == null ? null : Device.of(device);
    }

    public static ModelSpec defaults() {
      return new ModelSpec(null, null, null, null, null, null, null, null, null, null, null, null,
          null, null, null);
    }
  }

  /**
   * One online RSFT step: the method doc's n = 8, temperature 1.0, top_k 20, reward > 0.5.
   * {@code temperature} and {@code topK} are the run's sampling everywhere (RSFT rollouts, harness
   * scoring and every mean@k evaluation), so that what is measured is the policy RSFT trains.
   *
   * @param finetune {@code full} (every weight; the builtin model's only mode) or {@code lora}
   *     (adapters on a frozen base; the default for a Hugging Face model, whose full AdamW state
   *     is three times its weights)
   * @param lora the adapters' settings when finetune is lora
   */
  public record RsftSpec(
      Integer promptsPerStep,
      Integer samplesPerPrompt,
      Double temperature,
      Integer topK,
      Double acceptThreshold,
      Integer minibatch,
      Double learningRate,
      // Absent unless written (see ModelSpec.source): the default depends on model.source.
      @JsonInclude(JsonInclude.Include.NON_NULL) String finetune,
      @JsonInclude(JsonInclude.Include.NON_NULL) LoraSpec lora,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public RsftSpec {
      promptsPerStep = promptsPerStep == null ? 32 : promptsPerStep;
      samplesPerPrompt = samplesPerPrompt == null ? 8 : samplesPerPrompt;
      temperature = temperature == null ? 1.0 : temperature;
      topK = topK == null ? 20 : topK;
      acceptThreshold = acceptThreshold == null ? 0.5 : acceptThreshold;
      minibatch = minibatch == null ? 64 : minibatch;
      // Small: AdamW on a few dozen self-generated answers per step; 3e-4 already undoes pretraining.
      learningRate = learningRate == null ? 1e-4 : learningRate;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static RsftSpec defaults() {
      return new RsftSpec(null, null, null, null, null, null, null, null, null, null);
    }
  }

  /**
   * LoRA adapters: rank r on each layer's {@code targets} (Hugging Face module names), scaled
   * alpha / r; PEFT's usual defaults r = 8, alpha = 16 on q_proj and v_proj.
   */
  public record LoraSpec(
      Integer rank,
      Double alpha,
      List<String> targets,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public LoraSpec {
      rank = rank == null ? 8 : rank;
      alpha = alpha == null ? 16.0 : alpha;
      targets = targets == null ? List.of("q_proj", "v_proj") : List.copyOf(targets);
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static LoraSpec defaults() {
      return new LoraSpec(null, null, null, null);
    }
  }

  /**
   * How RSFT trains the model: rsft.finetune (a valid spec's, see {@link #scheduleKind}), or its
   * default for model.source.
   */
  public Finetune finetune() {
    return rsft.finetune() != null ? Finetune.of(rsft.finetune())
        : model.usesHuggingFace() ? Finetune.LORA : Finetune.FULL;
  }

  /** The LoRA settings RSFT uses when {@link #finetune} is lora. */
  public LoraSpec lora() {
    return rsft.lora() != null ? rsft.lora() : LoraSpec.defaults();
  }

  /**
   * Phase lengths and the weight budget: E = 0.6 epochs, I = 6 iterations, at most 30 rounds. The
   * adaptive schedule's rules: window, burn-in and patience 0.2 epoch over the training signal; a
   * harness phase of at least 6 iterations that stops after 2 without a strictly better best, at most 15.
   */
  public record PhaseSpec(
      Double weightEpochsPerPhase,
      Integer harnessIterationsPerPhase,
      Double weightBudgetEpochs,
      Integer maxRounds,
      Double windowEpochs,
      Double burnInEpochs,
      Double patienceEpochs,
      Integer harnessMinIterations,
      Integer harnessPatience,
      Integer harnessMaxIterations,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public PhaseSpec {
      weightEpochsPerPhase = weightEpochsPerPhase == null ? 0.6 : weightEpochsPerPhase;
      harnessIterationsPerPhase = harnessIterationsPerPhase == null ? 6 : harnessIterationsPerPhase;
      weightBudgetEpochs = weightBudgetEpochs == null ? 6.0 : weightBudgetEpochs;
      maxRounds = maxRounds == null ? 30 : maxRounds;
      windowEpochs = windowEpochs == null ? 0.2 : windowEpochs;
      burnInEpochs = burnInEpochs == null ? 0.2 : burnInEpochs;
      patienceEpochs = patienceEpochs == null ? 0.2 : patienceEpochs;
      harnessMinIterations = harnessMinIterations == null ? 6 : harnessMinIterations;
      harnessPatience = harnessPatience == null ? 2 : harnessPatience;
      harnessMaxIterations = harnessMaxIterations == null ? 15 : harnessMaxIterations;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static PhaseSpec defaults() {
      return new PhaseSpec(null, null, null, null, null, null, null, null, null, null, null);
    }
  }

  /**
   * Meta-Harness search: M = 3 candidates per iteration, turn budget 16 model calls.
   *
   * @param proposer template (built-in, offline), openai (an OpenAI-compatible chat-completions
   *     endpoint) or command (an external program run in a copy of the archive directory)
   * @param openaiBaseUrl openai: the endpoint's base URL, e.g. http://localhost:8000/v1
   * @param openaiModel openai: the model name sent with each request
   * @param openaiApiKeyEnv openai: the worker's environment variable holding the API key (unset: no key)
   * @param command command: the program and its arguments
   * @param commandTimeoutSeconds command: killed after this long
   * @param chatForm template: also propose harnesses that ask through the model's chat template
   *     (each task's FORM axis); for instruction-tuned Hugging Face models. Default false
   * @param maxTemperature the highest sampling temperature a harness's chat turn may ask for
   *     ({@code ChatOptions.withTemperature}; higher is lowered to it); absent: rsft.temperature
   * @param initialForm the form of the task's starting harness h0: {@code completion} (absent), or
   *     {@code chat} (the question as the user's message through the model's chat template: what an
   *     instruction-tuned model expects) or {@code tools} (math: chat with the task's tools offered)
   */
  public record HarnessSpec(
      String proposer,
      Integer candidatesPerIteration,
      Integer turnBudget,
      Integer episodeTimeoutSeconds,
      String openaiBaseUrl,
      String openaiModel,
      String openaiApiKeyEnv,
      List<String> command,
      Integer commandTimeoutSeconds,
      Boolean chatForm,
      // absent unless set, so a spec's JSON (and what derives from it) is unchanged without it
      @JsonInclude(JsonInclude.Include.NON_NULL) Double maxTemperature,
      // absent for the completion form (as maxTemperature: older specs' JSON is unchanged)
      @JsonInclude(JsonInclude.Include.NON_NULL) String initialForm,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    /** {@link #initialForm} values: h0 as a completion prompt (the default), chat or tools. */
    public static final java.util.Set<String> INITIAL_FORMS = java.util.Set.of("completion", "chat",
        "tools");

    public HarnessSpec {
      proposer = proposer == null ? Proposer.TEMPLATE.json() : proposer;
      candidatesPerIteration = candidatesPerIteration == null ? 3 : candidatesPerIteration;
      turnBudget = turnBudget == null ? 16 : turnBudget;
      episodeTimeoutSeconds = episodeTimeoutSeconds == null ? 30 : episodeTimeoutSeconds;
      openaiBaseUrl = openaiBaseUrl == null ? "" : openaiBaseUrl;
      openaiModel = openaiModel == null ? "" : openaiModel;
      openaiApiKeyEnv = openaiApiKeyEnv == null ? "OPENAI_API_KEY" : openaiApiKeyEnv;
      command = command == null ? List.of() : List.copyOf(command);
      commandTimeoutSeconds = commandTimeoutSeconds == null ? 600 : commandTimeoutSeconds;
      chatForm = chatForm != null && chatForm;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    /** {@link #proposer} as the closed set it is (see {@link ExperimentSpec#scheduleKind}). */
    public Proposer proposerKind() {
      return Proposer.of(proposer);
    }

    public static HarnessSpec defaults() {
      return new HarnessSpec(null, null, null, null, null, null, null, null, null, null, null, null,
          null);
    }
  }

  /**
   * Test evaluation: mean@k with k = 8 samples per D_test problem, every {@code everyEpochs} of RSFT
   * (paper: ~0.1 epoch; 0 = only at phase ends) and at every phase end.
   */
  public record EvalSpec(
      Integer k,
      Double everyEpochs,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public EvalSpec {
      k = k == null ? 8 : k;
      everyEpochs = everyEpochs == null ? 0.1 : everyEpochs;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static EvalSpec defaults() {
      return new EvalSpec(null, null, null);
    }
  }

  /**
   * How the run uses Temporal.
   *
   * @param continueAsNewAfter each workflow run continues as new after this many units of work (RSFT
   *     steps in a weight phase, iterations in a harness search, phases in the parent); 0 = only when
   *     Temporal suggests it (history size). Small values exercise continue-as-new in tests.
   */
  public record WorkflowSpec(
      Integer continueAsNewAfter,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public WorkflowSpec {
      continueAsNewAfter = continueAsNewAfter == null ? 0 : continueAsNewAfter;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static WorkflowSpec defaults() {
      return new WorkflowSpec(null, null);
    }
  }

  /**
   * Checkpoint retention: a run keeps its base, every phase's last checkpoint, the best one by test
   * mean@8 and the checkpoints of its last {@code keepLast} RSFT steps; the store deletes the rest
   * once no other run pins them (a full Hugging Face checkpoint with AdamW state is gigabytes).
   */
  public record CheckpointSpec(
      Integer keepLast,
      @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
    public CheckpointSpec {
      keepLast = keepLast == null ? 2 : keepLast;
      unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
    }

    public static CheckpointSpec defaults() {
      return new CheckpointSpec(null, null);
    }
  }
}
