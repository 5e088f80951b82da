package whale.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.index.NDIndex;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * AdamW written out on NDArrays so that its state (step count, first and second moments) can go into
 * our own checkpoint file; DJL's {@code Model.save} keeps no optimizer state.
 *
 * <p>One step: clip the global gradient norm to {@link #CLIP}, update the moments, apply bias
 * correction, and take the Adam step plus decoupled weight decay (matrices and embeddings only).
 *
 * <p>DJL/PyTorch facts this relies on (checked on DJL 0.36 / PyTorch 2.7.1):
 *
 * <ul>
 *   <li>gradients accumulate across GradientCollectors, so {@link #step} zeroes them afterwards;
 *   <li>an in-place update of a parameter that requires grad fails whenever PyTorch's thread-local
 *       grad mode is on, which it is by default on any thread other than the one that loaded the
 *       engine; updating a {@code stopGradient()} view (same storage) works on every thread;
 *   <li>{@code NDArray.set(float[])} does not copy: it replaces the tensor's storage with a Java
 *       direct buffer that lives only as long as that NDArray object, so it must never be used on
 *       a view whose storage outlives it (such as a gradient).
 * </ul>
 */
public final class AdamW {
  static final float BETA1 = 0.9f;
  static final float BETA2 = 0.95f;
  static final float EPS = 1e-8f;
  static final float WEIGHT_DECAY = 0.1f;
  static final float CLIP = 1.0f;
  private static final NDIndex ALL = new NDIndex("...");

  private final Map<String, NDArray> m = new LinkedHashMap<>();
  private final Map<String, NDArray> v = new LinkedHashMap<>();
  private final Set<String> decayed;
  private long step;

  /** Zero state for {@code params}; moments live in {@code manager} (the model's). */
  public AdamW(Map<String, NDArray> params, Set<String> decayed, NDManager manager) {
    this.decayed = decayed;
    for (Map.Entry<String, NDArray> e : params.entrySet()) {
      m.put(e.getKey(), manager.zeros(e.getValue().getShape()));
      v.put(e.getKey(), manager.zeros(e.getValue().getShape()));
    }
  }

  public long stepCount() {
    return step;
  }

  public NDArray firstMoment(String name) {
    return m.get(name);
  }

  public NDArray secondMoment(String name) {
    return v.get(name);
  }

  /** Restores a checkpoint's step count (the moments set by the caller, one at a time). */
  public void restoreStepCount(long stepCount) {
    this.step = stepCount;
  }

  /** Restores a checkpoint's state: step count and moment values (same names and sizes). */
  public void restore(long stepCount, Map<String, float[]> first, Map<String, float[]> second) {
    restoreStepCount(stepCount);
    for (String name : m.keySet()) {
      restoreMoments(name, first.get(name), second.get(name));
    }
  }

  /**
   * Restores one parameter's two moments (the caller can read a checkpoint one tensor at a time).
   * The arrays are replaced, not written: values set into an array live in Java's direct memory
   * until a garbage collection (see {@link OwnedArrays}).
   */
  public void restoreMoments(String name, float[] first, float[] second) {
    NDArray old = m.get(name);
    if (old == null) {
      throw new IllegalArgumentException("no parameter " + name + " in this optimizer");
    }
    restoreMoments(name, OwnedArrays.create(old.getManager(), first, old.getShape()),
        OwnedArrays.create(old.getManager(), second, old.getShape()));
  }

  /**
   * As above, the moments given as arrays (same shape as the parameter, in its manager), which the
   * optimizer now owns.
   */
  public void restoreMoments(String name, NDArray first, NDArray second) {
    NDArray oldM = m.get(name);
    NDArray oldV = v.get(name);
    if (oldM == null) {
      throw new IllegalArgumentException("no parameter " + name + " in this optimizer");
    }
    if (!first.getShape().equals(oldM.getShape()) || !second.getShape().equals(oldM.getShape())) {
      throw new IllegalArgumentException("moments of " + name + " have shapes " + first.getShape()
          + " and " + second.getShape() + ", the parameter " + oldM.getShape());
    }
    m.put(name, first);
    v.put(name, second);
    oldM.close();
    oldV.close();
  }

  /**
   * One update from the gradients the last backward pass left on {@code params}; call inside an
   * {@code NDScope} (temporaries are attached to the parameters' manager). Returns false and changes
   * nothing but the gradients when the gradient norm is not finite.
   */
  public boolean step(Map<String, NDArray> params, float lr) {
    Map<String, NDArray> grads = new LinkedHashMap<>();
    NDArray sumSq = null;
    for (Map.Entry<String, NDArray> e : params.entrySet()) {
      NDArray g = e.getValue().getGradient();
      grads.put(e.getKey(), g);
      try (NDScope scope = new NDScope()) { // g^2 is the parameter's size: gone before the next
        NDArray s = g.square().sum();
        NDArray total = sumSq == null ? s : sumSq.add(s);
        NDScope.unregister(total);
        if (sumSq != null) {
          sumSq.close();
        }
        sumSq = total;
      }
    }
    double norm = Math.sqrt(sumSq.getFloat());
    sumSq.close();
    boolean finite = Double.isFinite(norm);
    if (finite) {
      step++;
      float scale = (float) Math.min(1.0, CLIP / (norm + 1e-6));
      double bc1 = 1 - Math.pow(BETA1, step);
      double bc2 = 1 - Math.pow(BETA2, step);
      for (Map.Entry<String, NDArray> e : params.entrySet()) {
        // One scope per parameter: its five temporaries (each the parameter's size) die before the
        // next parameter's. Left to the caller's scope, a full fine-tune of SmolLM2-135M held about
        // 3.6 GB of them at once, the step's peak (issue 20).
        try (NDScope scope = new NDScope()) {
          update(e.getKey(), e.getValue(), grads.get(e.getKey()), scale, bc1, bc2, lr);
        }
      }
    }
    for (NDArray g : grads.values()) {
      if (finite) {
        g.subi(g); // zero in place: the parameter's .grad buffer is shared with this view
      } else {
        // NaN*0 is NaN, so overwrite outright, but in place: NDArray.set(float[]) would swap the
        // .grad storage for a Java buffer that the GC frees while the parameter still uses it.
        g.set(ALL, 0f);
      }
    }
    return finite;
  }

  /** One parameter's AdamW update, in place on its moments and its weight. */
  private void update(String name, NDArray param, NDArray grad, float scale, double bc1, double bc2,
      float lr) {
    NDArray g = grad.mul(scale);
    NDArray mi = m.get(name);
    NDArray vi = v.get(name);
    mi.muli(BETA1).addi(g.mul(1 - BETA1));
    vi.muli(BETA2).addi(g.square().muli(1 - BETA2));
    // update = lr * m̂ / (sqrt(v̂) + eps), with m̂ = m/bc1 and v̂ = v/bc2
    NDArray update = mi.div(bc1).divi(vi.div(bc2).sqrt().addi(EPS)).muli(lr);
    try (NDArray w = param.stopGradient()) {
      if (decayed.contains(name)) {
        w.muli(1 - lr * WEIGHT_DECAY);
      }
      w.subi(update);
    }
  }

  public void close() {
    m.values().forEach(NDArray::close);
    v.values().forEach(NDArray::close);
  }
}
