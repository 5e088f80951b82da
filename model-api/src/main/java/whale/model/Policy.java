package whale.model;

import java.util.List;

/**
 * A model whale samples from and trains by RSFT: the builtin character model
 * ({@code LanguageModel}) or a Hugging Face decoder ({@code HfModel}), LoRA or full. The weight
 * activity holds one of these for a step: episodes sample from it, the accepted rollouts fine-tune
 * it, the activity stores it as the step's checkpoint.
 */
public interface Policy extends Generator, AutoCloseable {
  /** Called after every training step with the step number (1-based) and its loss. */
  interface Progress {
    void onStep(int step, float loss);
  }

  /**
   * One epoch of supervised fine-tuning: the examples in an order shuffled by {@code seed}, in
   * minibatches of {@code minibatch}, the loss on model-written (completion) tokens only, a constant
   * learning rate. An empty list changes nothing. {@code progress} hears of each step, or of the
   * whole epoch at its end for a model that trains on its own thread.
   */
  TrainStats sft(List<SftExample> examples, int minibatch, float learningRate, long seed, Progress progress);

  /** Whether it trains every weight: its gradients and optimizer moments are the model's size again. */
  boolean trainsAllWeights();

  @Override
  void close();
}
