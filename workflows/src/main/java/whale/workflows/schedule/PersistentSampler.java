package whale.workflows.schedule;

import java.util.ArrayList;
import java.util.List;

/**
 * Walks D_weight in a seeded order, a fresh permutation per epoch, never revisiting a problem within
 * an epoch. Its whole state is {@link #position()}, kept in workflow state so a resumed run continues
 * where it stopped. A batch never straddles two epochs: the last batch of an epoch may be short.
 */
public final class PersistentSampler {
  /** Where the sampler stands: epoch number and offset into that epoch's permutation. */
  public record Position(int epoch, int offset) {
    public static final Position START = new Position(0, 0);
  }

  private final int size;
  private final long seed;
  private Position position;
  private int[] permutation;
  private int permutationEpoch = -1;

  public PersistentSampler(int size, long seed, Position position) {
    if (size <= 0) {
      throw new IllegalArgumentException("size must be positive, got " + size);
    }
    if (position.offset() < 0 || position.offset() > size || position.epoch() < 0) {
      throw new IllegalArgumentException("position out of range: " + position);
    }
    this.size = size;
    this.seed = seed;
    this.position = position;
  }

  public Position position() {
    return position;
  }

  /** Number of batches of {@code batch} problems in one epoch. */
  public static int batchesPerEpoch(int size, int batch) {
    return (size + batch - 1) / batch;
  }

  /** The next batch of problem indices (0-based into D_weight), advancing the position. */
  public List<Integer> next(int batch) {
    if (batch <= 0) {
      throw new IllegalArgumentException("batch must be positive, got " + batch);
    }
    if (position.offset() >= size) {
      position = new Position(position.epoch() + 1, 0);
    }
    int[] perm = permutation(position.epoch());
    int end = Math.min(size, position.offset() + batch);
    List<Integer> out = new ArrayList<>(end - position.offset());
    for (int i = position.offset(); i < end; i++) {
      out.add(perm[i]);
    }
    position = end == size ? new Position(position.epoch() + 1, 0) : new Position(position.epoch(), end);
    return out;
  }

  private int[] permutation(int epoch) {
    if (permutationEpoch != epoch) {
      int[] p = new int[size];
      for (int i = 0; i < size; i++) {
        p[i] = i;
      }
      // Fisher-Yates driven by Seeds.mix: deterministic, no java.util.Random needed.
      for (int i = size - 1; i > 0; i--) {
        int j = (int) Long.remainderUnsigned(Seeds.mix(seed, epoch, i), i + 1);
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
      }
      permutation = p;
      permutationEpoch = epoch;
    }
    return permutation;
  }
}
