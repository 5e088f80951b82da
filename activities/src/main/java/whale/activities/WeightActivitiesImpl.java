package whale.activities;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import whale.harness.EpisodeResult;
import whale.model.LanguageModel;
import whale.model.Policy;
import whale.model.ModelConfig;
import whale.model.NativeHeap;
import whale.model.SampledTokens;
import whale.model.SftExample;
import whale.model.TrainStats;
import whale.model.hf.HfModel;
import whale.store.Pins;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.RetainRequest;
import whale.workflows.activities.RetainResult;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.WeightActivities;
import whale.workflows.schedule.Seeds;

/** The weight side: the base model's pretraining and one online RSFT step. */
public class WeightActivitiesImpl implements WeightActivities {
  /** The memo namespace of {@link #prepareBaseModel}'s builtin pretraining, keyed by the request. */

  private final ActivityRuntime runtime;

  public WeightActivitiesImpl(ActivityRuntime runtime) {
    this.runtime = runtime;
  }

  @Override
  public String prepareBaseModel(BaseModelRequest req) {
    return ActivityHeartbeat.during("pretrain", () -> {
      if (req.model().usesHuggingFace()) {
        // Not memoized: checking the directory is cheap and must see today's files; the descriptor
        // is content-addressed, so the same directory gives the same reference on every attempt.
        return HfPolicy.prepareBase(runtime.store(), req);
      }
      return Memo.once(runtime.store(), Memo.Kind.BASE_MODEL, req, String.class, () -> pretrain(req));
    });
  }

  private String pretrain(BaseModelRequest req) {
    ActivityHeartbeat.progress("pretrain: building the corpus");
    Task task = runtime.task(req.task());
    var m = req.model();
    List<String> corpus = task.pretrainingCorpus(req.seed(), m.pretrainDocuments(), m.pretrainCorpus());
    ModelConfig config = new ModelConfig(ModelConfig.defaults().vocabSize(), m.contextLength(),
        m.dModel(), m.layers(), m.heads(), ModelConfig.defaults().mlpRatio());
    try (LanguageModel model = LanguageModel.create(config, req.seed())) {
      model.pretrain(corpus, m.pretrainSteps(), m.pretrainBatch(),
          m.pretrainLearningRate().floatValue(), req.seed(), (step, loss) ->
              // a checkpoint per step: the ticker sends the latest; an abandoned attempt stops here
              ActivityHeartbeat.progress("pretrain step " + step + "/" + m.pretrainSteps()
                  + " loss " + loss));
      return save(model);
    }
  }

  @Override
  public RsftStepResult rsftStep(RsftStepRequest req) {
    String caller = callerWorkflowId();
    return ActivityHeartbeat.during("RSFT step " + req.step(), () -> {
      RsftStepResult r = Memo.once(runtime.store(), Memo.Kind.RSFT_STEP, req, RsftStepResult.class,
          () -> step(req));
      // Held for the calling workflow until its retention call pins it: a run sharing the store
      // (identical bytes) cannot delete it in between.
      if (caller != null && !new Pins(runtime.store()).hold(caller, r.checkpointRef())) {
        // deleted by another run between the memo's check and the hold: the retry recomputes it
        throw new IllegalStateException("checkpoint " + r.checkpointRef() + " of RSFT step "
            + req.step() + " was deleted before it could be held; retrying recomputes it");
      }
      return r;
    });
  }

  /** The workflow that scheduled the running activity; null outside an activity (tests). */
  private static String callerWorkflowId() {
    var ctx = ActivityHeartbeat.activityContext();
    return ctx == null ? null : ctx.getInfo().getWorkflowId();
  }

  @Override
  public RetainResult retainCheckpoints(RetainRequest req) {
    String caller = callerWorkflowId();
    // heartbeats: deleting gigabytes on a shared file system can outlast the heartbeat timeout
    return ActivityHeartbeat.during("checkpoint retention", () -> {
      Pins.Outcome o = new Pins(runtime.store()).retain(req.run(), caller, req.held(),
          req.released(), ref -> HfPolicy.dropUnpacked(runtime.store(), ref));
      return new RetainResult(o.deleted(), o.pinnedElsewhere(), o.bytesFreed());
    });
  }

  /**
   * The method doc's step: n samples per prompt under the current harness, the verifier, accept
   * reward above the threshold, one SFT epoch over the accepted rollouts' model-written tokens, and
   * no update when nothing is accepted.
   */
  /** For the tests: trained parts on sampled ids and re-tokenized, of the last vLLM step. */
  volatile int[] lastExactness;

  private RsftStepResult step(RsftStepRequest req) {
    ActivityHeartbeat.progress("RSFT step " + req.step() + ": loading " + req.checkpointRef());
    Task task = runtime.task(req.task());
    List<TaskProblem> all = task.split(Split.WEIGHT);
    List<TaskProblem> batch = new ArrayList<>(req.problems().size());
    for (int i : req.problems()) {
      if (i < 0 || i >= all.size()) {
        throw new IllegalArgumentException("problem index " + i + " outside D_weight of size "
            + all.size());
      }
      batch.add(all.get(i));
    }
    String harness = runtime.harnessSource(req.harnessRef());
    try (Policy model = policy(req.checkpointRef())) {
      SampledTokens sampled = new SampledTokens();
      List<EpisodeResult> episodes = sample(req, model, g -> {
        if (g instanceof whale.model.vllm.VllmGenerator v) {
          v.recordInto(sampled); // the server's ids, to train on exactly them
        }
        return Episodes.run(runtime.episodes(), g, task, harness, batch, req.samplesPerPrompt(),
            req.seed(), req.episodes(), "RSFT step " + req.step());
      });
      double reward = episodes.stream().mapToDouble(EpisodeResult::reward).average().orElse(0);
      List<SftExample> examples = new ArrayList<>();
      int accepted = 0;
      for (EpisodeResult e : episodes) {
        if (e.reward() > req.acceptThreshold()) {
          accepted++;
          for (SftExample ex : e.sftExamples(model.chatTemplate())) {
            examples.add(sampled.isEmpty() ? ex : exact(sampled, ex, (HfModel) model));
          }
        }
      }
      String rolloutsRef = runtime.store().putJson(episodes);
      WhaleMetrics.rsftStep(episodes.size(), accepted, !examples.isEmpty());
      if (!sampled.isEmpty()) {
        ActivityHeartbeat.progress("RSFT step " + req.step() + ": " + sampled.matched() + " trained parts on "
            + "the server's sampled ids, " + sampled.unmatched() + " re-tokenized (re-rendered by the template)");
        lastExactness = new int[] {sampled.matched(), sampled.unmatched()};
      }
      if (examples.isEmpty()) {
        return new RsftStepResult(req.checkpointRef(), reward, 0, episodes.size(), 0, 0.0,
            rolloutsRef);
      }
      if (model instanceof HfModel hf && hf.trainsAllWeights()) {
        // a full step's optimizer state is the run's peak: the idle sandboxes (0.2 GB each) go
        // too, started again by the next episode run (issue 20's 5 GB bound)
        runtime.stopIdleSandboxes();
      }
      // what sampling freed (KV caches, prefill activations) goes back to the system before the
      // SFT's activations and gradients are allocated: a lower peak (issue 20's 3 and 5 GB bounds)
      NativeHeap.trim();
      ActivityHeartbeat.progress("RSFT step " + req.step() + ": SFT on " + examples.size() + " calls");
      // the core for the SFT only: its rollouts took one per model call, as evaluations do
      TrainStats stats = Cores.run(() -> model.sft(examples, req.minibatch(), (float) req.learningRate(),
          Seeds.mix(req.seed(), 1), (i, loss) -> ActivityHeartbeat.progress("RSFT step " + req.step()
              + ": SFT minibatch " + i + " loss " + loss))); // an abandoned step stops here, unsaved
      return new RsftStepResult(save(model), reward, accepted, episodes.size(), examples.size(),
          stats.meanLoss(), rolloutsRef);
    }
  }

  /**
   * The step's rollouts: from the model about to be trained, or on vLLM with the checkpoint's
   * adapter, probed against this very model before the first request.
   */
  private <T> T sample(RsftStepRequest req, Policy model, java.util.function.Function<whale.model.Generator, T> fn) {
    if (!req.episodes().onVllm()) {
      return fn.apply(model);
    }
    HfModel hf = (HfModel) model; // VllmRollouts refuses a builtin checkpoint first
    return runtime.vllm().with(runtime.store(), req.checkpointRef(), req.episodes().rollouts(),
        (p, c) -> hf.tokenLogProbs(p, c), fn);
  }

  /** {@code ex} with the server's sampled ids on its trained parts ({@link SampledTokens}). */
  private static SftExample exact(SampledTokens sampled, SftExample ex, HfModel model) {
    List<Integer> eos = model.tokenizer().eosIds();
    return sampled.exact(ex, model.chatTemplate().eosToken(), eos.isEmpty() ? -1 : eos.get(0));
  }

  /** The model an RSFT step samples from and trains, as its checkpoint's kind says. */
  private Policy policy(String checkpointRef) {
    if (!HfPolicy.isHf(runtime.store(), checkpointRef)) {
      return runtime.loadForTraining(checkpointRef);
    }
    // LoRA or full as the base descriptor says; a step's checkpoint keeps the mode
    HfModel m = HfPolicy.loadForTraining(runtime.store(), checkpointRef);
    if (m.trainsAllWeights()) {
      // Its weights, gradients and AdamW's two moments are four copies of the model: the cached
      // sampling copies (the shared base, the last checkpoint: up to 768 MB on SmolLM2-135M) go
      // first and are reloaded when next sampled from (issue 20's 5 GB bound).
      runtime.dropIdleModels();
    }
    return m;
  }

  /** Stores the trained model in its kind's checkpoint format; returns the reference. */
  private String save(Policy model) {
    return model instanceof HfModel hf ? HfPolicy.save(runtime.store(), hf) : save((LanguageModel) model);
  }

  private String save(LanguageModel model) {
    Path tmp = runtime.store().newTempFile(".ckpt");
    try {
      model.save(tmp);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write checkpoint", e);
    }
    return runtime.store().putFile(tmp);
  }
}
