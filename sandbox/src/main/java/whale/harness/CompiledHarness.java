package whale.harness;

import java.lang.reflect.Constructor;
import java.util.function.Supplier;

/**
 * A harness class compiled from source. {@link #newInstance} loads the classes again in a class
 * loader of their own for every instance, so static state (however it got past the compiler's
 * checks) is never shared between episodes.
 */
public final class CompiledHarness {
  private final String className;
  private final String source;
  private final Class<? extends Harness> harnessClass;
  private final Supplier<Class<?>> freshClass;

  CompiledHarness(String className, String source, Class<? extends Harness> harnessClass,
      Supplier<Class<?>> freshClass) throws NoSuchMethodException {
    this.className = className;
    this.source = source;
    this.harnessClass = harnessClass;
    this.freshClass = freshClass;
    harnessClass.getConstructor();
  }

  public String className() {
    return className;
  }

  public String source() {
    return source;
  }

  /** The class as loaded at compile time (its own loader; no episode runs it). */
  public Class<? extends Harness> harnessClass() {
    return harnessClass;
  }

  /** A fresh instance, of the class loaded in a fresh loader (each episode gets its own). */
  public Harness newInstance() {
    Constructor<? extends Harness> constructor;
    try {
      constructor = freshClass.get().asSubclass(Harness.class).getConstructor();
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException("cannot instantiate " + className + ": " + e, e);
    }
    try {
      return constructor.newInstance();
    } catch (java.lang.reflect.InvocationTargetException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException("harness constructor failed: " + c, c);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot instantiate " + className + ": " + e, e);
    }
  }
}
