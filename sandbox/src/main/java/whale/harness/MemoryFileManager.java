package whale.harness;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;

/**
 * javac's file manager for one harness: the source is read from a string and every class file javac
 * writes lands in {@link #classes}, so compiling a harness touches no disk.
 */
final class MemoryFileManager extends ForwardingJavaFileManager<JavaFileManager> {
  /** Binary class name to class file, filled as javac generates. */
  final Map<String, byte[]> classes = new ConcurrentHashMap<>();

  MemoryFileManager(JavaFileManager delegate) {
    super(delegate);
  }

  @Override
  public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
      FileObject sibling) {
    return new ClassFile(className, classes);
  }

  /** The harness source, as javac's input. */
  static final class SourceFile extends SimpleJavaFileObject {
    private final String source;

    SourceFile(String className, String source) {
      super(URI.create("string:///" + className.replace('.', '/') + Kind.SOURCE.extension), Kind.SOURCE);
      this.source = source;
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return source;
    }
  }

  private static final class ClassFile extends SimpleJavaFileObject {
    private final String name;
    private final Map<String, byte[]> sink;

    ClassFile(String name, Map<String, byte[]> sink) {
      super(URI.create("mem:///" + name.replace('.', '/') + Kind.CLASS.extension), Kind.CLASS);
      this.name = name;
      this.sink = sink;
    }

    @Override
    public OutputStream openOutputStream() {
      return new ByteArrayOutputStream() {
        @Override
        public void close() throws IOException {
          super.close();
          sink.put(name, toByteArray());
        }
      };
    }
  }
}
