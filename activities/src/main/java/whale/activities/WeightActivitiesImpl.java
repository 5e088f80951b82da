package whale.activities;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import whale.harness.EpisodeResult;
import whale.model.LanguageModel;
import whale.model.ModelConfig;
import whale.model.SftExample;
import whale.model.TrainStats;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.workflows.activities.BaseModelRequest;
import whale.workflows.activities.RsftStepRequest;
import whale.workflows.activities.RsftStepResult;
import whale.workflows.activities.WeightActivities;
import whale.workflows.schedule.Seeds;

/** The weight side: the base model's pretraining and one online RSFT step. */
public class WeightActivitiesImpl implements WeightActivities {
  private final ActivityRuntime runtime;

  public WeightActivitiesImpl(ActivityRuntime runtime) {
    this.runtime = runtime;
  }

  @Override
  public String prepareBaseModel(BaseModelRequest req) {
    return ActivityHeartbeat.during("pretrain", () ->
        Memo.once(runtime.store(), "base-model", req, String.class, () -> pretrain(req)));
  }

  private String pretrain(BaseModelRequest req) {
    ActivityHeartbeat.progress("pretrain: building the corpus");
    Task task = runtime.task(req.task());
    var m = req.model();
    List<String> corpus = task.pretrainingCorpus(req.seed(), m.pretrainDocuments());
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
    return ActivityHeartbeat.during("RSFT step " + req.step(), () ->
        Memo.once(runtime.store(), "rsft-step", req, RsftStepResult.class, () -> step(req)));
  }

  /**
   * The method doc's step: n samples per prompt under the current harness, the verifier, accept
   * reward above the threshold, one SFT epoch over the accepted rollouts' model-written tokens, and
   * no update when nothing is accepted.
   */
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
    try (LanguageModel model = runtime.loadForTraining(req.checkpointRef())) {
      List<EpisodeResult> episodes = Episodes.run(runtime.episodes(), model, task, harness, batch,
          req.samplesPerPrompt(), req.seed(), req.episodes(), "RSFT step " + req.step());
      double reward = episodes.stream().mapToDouble(EpisodeResult::reward).average().orElse(0);
      List<SftExample> examples = new ArrayList<>();
      int accepted = 0;
      for (EpisodeResult e : episodes) {
        if (e.reward() > req.acceptThreshold()) {
          accepted++;
          examples.addAll(e.sftExamples());
        }
      }
      String rolloutsRef = runtime.store().putJson(episodes);
      WhaleMetrics.rsftStep(episodes.size(), accepted, !examples.isEmpty());
      if (examples.isEmpty()) {
        return new RsftStepResult(req.checkpointRef(), reward, 0, episodes.size(), 0, 0.0,
            rolloutsRef);
      }
      ActivityHeartbeat.progress("RSFT step " + req.step() + ": SFT on " + examples.size() + " calls");
      TrainStats stats = model.sft(examples, req.minibatch(), (float) req.learningRate(),
          Seeds.mix(req.seed(), 1), (i, loss) -> ActivityHeartbeat.progress("RSFT step " + req.step()
              + ": SFT minibatch " + i + " loss " + loss)); // an abandoned step stops here, unsaved
      return new RsftStepResult(save(model), reward, accepted, episodes.size(), examples.size(),
          stats.meanLoss(), rolloutsRef);
    }
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
