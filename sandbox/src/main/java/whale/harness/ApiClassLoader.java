package whale.harness;

/**
 * Exposes only the harness API classes of the host, and the JDK through the platform loader: the parent
 * of every harness's own loader, so a harness cannot load the rest of whale even by name.
 */
final class ApiClassLoader extends ClassLoader {
  private final ClassLoader host;

  ApiClassLoader(ClassLoader host) {
    super("whale-harness-api", ClassLoader.getPlatformClassLoader());
    this.host = host;
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (HarnessCompiler.API_CLASSES.contains(name)) {
      return host.loadClass(name);
    }
    return super.loadClass(name, resolve);
  }
}
