package whale.harness;

import java.util.Map;

/**
 * Defines the compiled classes of one harness. Each episode gets a new one, so static state never
 * outlives its episode.
 */
final class MemoryClassLoader extends ClassLoader {
  private final Map<String, byte[]> classes;

  MemoryClassLoader(ClassLoader parent, Map<String, byte[]> classes) {
    super("whale-harness", parent);
    this.classes = classes;
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    byte[] b = classes.get(name);
    if (b == null) {
      throw new ClassNotFoundException(name);
    }
    return defineClass(name, b, 0, b.length);
  }
}
