package whale.model;

/**
 * Shape of a {@link TinyGpt}.
 *
 * @param vocabSize token ids are in [0, vocabSize)
 * @param contextLength most tokens the model attends over (also the size of the positional table)
 * @param dModel width of the residual stream
 * @param layers number of transformer blocks
 * @param heads attention heads per block; must divide dModel
 * @param mlpRatio hidden width of the MLP as a multiple of dModel
 */
public record ModelConfig(
    int vocabSize, int contextLength, int dModel, int layers, int heads, int mlpRatio) {
  public ModelConfig {
    if (vocabSize < 2) {
      throw new IllegalArgumentException("vocabSize must be >= 2: " + vocabSize);
    }
    if (contextLength < 2) {
      throw new IllegalArgumentException("contextLength must be >= 2: " + contextLength);
    }
    if (dModel < 1 || layers < 1 || heads < 1 || mlpRatio < 1) {
      throw new IllegalArgumentException(
          "dModel, layers, heads and mlpRatio must be positive: " + this);
    }
    if (dModel % heads != 0) {
      throw new IllegalArgumentException(
          "heads (" + heads + ") must divide dModel (" + dModel + ")");
    }
  }

  /** The defaults: character vocabulary, context 160, d=64, 2 layers, 4 heads, MLP ratio 4. */
  public static ModelConfig defaults() {
    return new ModelConfig(CharTokenizer.VOCAB_SIZE, 160, 64, 2, 4, 4);
  }

  public int headDim() {
    return dModel / heads;
  }
}
