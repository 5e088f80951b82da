package whale.harness;

import java.lang.reflect.Constructor;

/** A harness class compiled from source and loaded in its own class loader. */
public final class CompiledHarness {
  private final String className;
  private final String source;
  private final Class<? extends Harness> harnessClass;
  private final Constructor<? extends Harness> constructor;

  CompiledHarness(String className, String source, Class<? extends Harness> harnessClass)
      throws NoSuchMethodException {
    this.className = className;
    this.source = source;
    this.harnessClass = harnessClass;
    this.constructor = harnessClass.getConstructor();
  }

  public String className() {
    return className;
  }

  public String source() {
    return source;
  }

  public Class<? extends Harness> harnessClass() {
    return harnessClass;
  }

  /** A fresh instance (each episode gets its own). Runs the class's constructor. */
  public Harness newInstance() {
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
