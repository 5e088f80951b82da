package whale.harness;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import com.sun.source.util.Trees;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.TypeElement;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import whale.task.Problem;

/**
 * Compiles harness source in memory (nothing is written to disk), checks it against an allow-list of
 * the types and members it may use, and loads it in a fresh class loader whose parent exposes only the
 * harness API and the JDK.
 *
 * <p>Allowed: {@link Harness}, {@link HarnessContext}, {@link HarnessResult}, {@link Problem}; the
 * java.lang basics (String, StringBuilder, Math, boxes, Object, CharSequence, Iterable, Comparable,
 * annotations, Exception and its java.lang subclasses); the packages java.util, java.util.regex,
 * java.util.function, java.util.stream and java.text (minus ServiceLoader, ResourceBundle, Timer,
 * Formatter, StreamSupport and parallel streams). Everything else is rejected: System, Runtime, Thread,
 * ProcessBuilder, ClassLoader, Class and class literals, Throwable and Error (so a harness cannot
 * swallow the stop of a runaway episode), java.io, java.nio, java.net, java.lang.reflect,
 * java.util.concurrent, and every other whale class.
 *
 * <p>Episodes must not share state or outlive themselves, so these are rejected too, each with a
 * diagnostic naming its line: non-final static fields, static final fields that may hold mutable
 * state (only primitives, String, boxes, Pattern, immutable records and enums of the source,
 * List/Set/Map made by their of/copyOf factories, and lambdas qualify), enum fields that are not final
 * and immutable (an enum constant is one instance for every episode), finalize() overrides (the
 * Finalizer thread would run them after the episode), Locale/TimeZone.setDefault, String.intern (a
 * channel between episodes through the JVM's string pool); and return, throw, break or continue
 * leaving a finally block (they would discard an Error in flight, e.g. a StackOverflowError, which
 * harness code may not catch). Sources over {@link #MAX_SOURCE_CHARS} are
 * rejected before javac runs; the header (package, public class) is found by a linear lexer. This
 * class bounds neither javac's time nor its memory: untrusted source is compiled in a sandbox
 * process ({@code SandboxExecutor#checkHarness}).
 *
 * <p>This class is the order of the steps; the steps live beside it: {@code AllowListScanner} and
 * {@code FinallyScanner} (the checks above), {@code MemoryFileManager} (javac's in-memory files),
 * {@code ApiClassLoader} and {@code MemoryClassLoader} (loading).
 */
public final class HarnessCompiler {
  /** The classes a harness may reference and that its class loader's parent exposes. */
  public static final Set<String> API_CLASSES = Set.of(
      Harness.class.getName(),
      HarnessContext.class.getName(),
      HarnessResult.class.getName(),
      Problem.class.getName(),
      ChatHarness.class.getName(),
      whale.chat.Message.class.getName(),
      whale.chat.FunctionCall.class.getName(),
      whale.chat.ToolSchema.class.getName(),
      whale.chat.ChatOptions.class.getName(),
      whale.chat.AssistantTurn.class.getName());

  private static final String[] RESERVED_PACKAGES = {
    "java.", "javax.", "jdk.", "sun.", "com.sun.", "whale.harness", "whale.task", "whale.model",
    "whale.eval", "whale.chat"
  };

  /**
   * Longest source accepted (characters). Generous for chat harnesses with long system prompts; javac
   * itself refuses a single string constant over 65,535 UTF-8 bytes.
   */
  public static final int MAX_SOURCE_CHARS = 200_000;

  private final JavaCompiler compiler;
  private final String apiClasspath;
  private final ClassLoader apiLoader;

  public HarnessCompiler() {
    this.compiler = ToolProvider.getSystemJavaCompiler();
    if (compiler == null) {
      throw new IllegalStateException("no system Java compiler (run on a JDK, not a JRE)");
    }
    // javac sees where the harness API lives and where this compiler lives: in a deployment both are
    // the one shaded jar; in a build, the harness-api module and this one. So a reference to a whale
    // class outside the API still resolves, and the allow-list rejects it by name instead of javac
    // saying "cannot find symbol". What a harness may load is decided by ApiClassLoader alone.
    Set<String> cp = new LinkedHashSet<>();
    for (Class<?> c : new Class<?>[] {Harness.class, Problem.class, HarnessCompiler.class,
        whale.model.SamplingParams.class}) {
      cp.add(codeSource(c));
    }
    this.apiClasspath = String.join(File.pathSeparator, cp);
    this.apiLoader = new ApiClassLoader(Harness.class.getClassLoader());
  }

  private static String codeSource(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException | RuntimeException e) {
      throw new IllegalStateException("cannot locate the harness API classes of " + c, e);
    }
  }

  /** Why {@code source} is too long to compile, or null. */
  public static String sizeProblem(String source) {
    return source.length() <= MAX_SOURCE_CHARS ? null
        : "source is " + source.length() + " characters, over the limit of " + MAX_SOURCE_CHARS;
  }

  /** Compiles, checks and loads {@code source}. */
  public CompiledHarness compile(String source) throws HarnessCompilationException {
    Result r = tryCompile(source);
    if (!r.ok()) {
      throw new HarnessCompilationException(r.diagnostics());
    }
    return r.harness();
  }

  /**
   * The outcome of {@link #tryCompile}: the harness, or the diagnostics that explain why there is none.
   */
  public record Result(CompiledHarness harness, List<HarnessDiagnostic> diagnostics) {
    public boolean ok() {
      return harness != null;
    }

    /** Diagnostics one per line, "line L:C: message". */
    public String errorText() {
      return HarnessCompilationException.format(diagnostics);
    }
  }

  /** Like {@link #compile} but returns the diagnostics instead of throwing. */
  public Result tryCompile(String source) {
    List<HarnessDiagnostic> diags = new ArrayList<>();
    if (source == null || source.isBlank()) {
      diags.add(new HarnessDiagnostic(0, 0, "empty source"));
      return new Result(null, diags);
    }
    String tooLong = sizeProblem(source);
    if (tooLong != null) {
      diags.add(new HarnessDiagnostic(0, 0, tooLong));
      return new Result(null, diags);
    }
    SourceHeader header = SourceHeader.scan(source);
    String pkg = header.packageName();
    if (header.publicClass() == null) {
      diags.add(new HarnessDiagnostic(0, 0,
          "no public class found: the source must declare one public class implementing whale.harness.Harness"));
      return new Result(null, diags);
    }
    String simple = header.publicClass();
    for (String reserved : RESERVED_PACKAGES) {
      if (!pkg.isEmpty() && (pkg + ".").startsWith(reserved.endsWith(".") ? reserved : reserved + ".")) {
        diags.add(new HarnessDiagnostic(header.packageLine(), 1,
            "package " + pkg + " is reserved; use e.g. whale.generated"));
        return new Result(null, diags);
      }
    }
    String className = pkg.isEmpty() ? simple : pkg + "." + simple;

    DiagnosticCollector<JavaFileObject> collector = new DiagnosticCollector<>();
    StandardJavaFileManager std = compiler.getStandardFileManager(collector, Locale.ROOT, StandardCharsets.UTF_8);
    MemoryFileManager fm = new MemoryFileManager(std);
    try {
      JavaFileObject file = new MemoryFileManager.SourceFile(className, source);
      List<String> options = List.of("-classpath", apiClasspath, "-proc:none", "-g", "-Xlint:none",
          "-encoding", "UTF-8", "--release", "17", "-implicit:none");
      JavacTask task = (JavacTask) compiler.getTask(new StringWriter(), fm, collector, options, null, List.of(file));
      Iterable<? extends CompilationUnitTree> units = task.parse();
      task.analyze();
      if (addErrors(collector, diags)) {
        return new Result(null, diags);
      }
      Trees trees = Trees.instance(task);
      Elements elements = task.getElements();
      Types types = task.getTypes();
      for (CompilationUnitTree unit : units) {
        new AllowListScanner(trees, elements, types, unit, diags).scan(unit, null);
      }
      if (!diags.isEmpty()) {
        return new Result(null, diags);
      }
      checkImplementsHarness(units, trees, elements, types, className, diags);
      if (!diags.isEmpty()) {
        return new Result(null, diags);
      }
      task.generate();
      if (addErrors(collector, diags)) {
        return new Result(null, diags);
      }
    } catch (IOException | RuntimeException e) {
      if (diags.isEmpty()) {
        addErrors(collector, diags);
      }
      diags.add(new HarnessDiagnostic(0, 0, "compiler failure: " + e));
      return new Result(null, diags);
    } finally {
      try {
        fm.close();
      } catch (IOException ignored) {
        // nothing to release
      }
    }
    Map<String, byte[]> classes = Map.copyOf(new TreeMap<>(fm.classes));
    // every episode loads the classes again in a loader of its own, so static state never outlives it
    Supplier<Class<?>> freshClass = () -> {
      try {
        return Class.forName(className, false, new MemoryClassLoader(apiLoader, classes));
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("cannot load " + className + ": " + e, e);
      }
    };
    try {
      Class<?> cls = Class.forName(className, false, new MemoryClassLoader(apiLoader, classes));
      if (!Harness.class.isAssignableFrom(cls)) {
        diags.add(new HarnessDiagnostic(0, 0, className + " does not implement whale.harness.Harness"));
        return new Result(null, diags);
      }
      return new Result(new CompiledHarness(className, source, cls.asSubclass(Harness.class), freshClass), diags);
    } catch (NoSuchMethodException e) {
      diags.add(new HarnessDiagnostic(0, 0, className + " must have a public no-argument constructor"));
      return new Result(null, diags);
    } catch (ClassNotFoundException | LinkageError e) {
      diags.add(new HarnessDiagnostic(0, 0, "cannot load " + className + ": " + e));
      return new Result(null, diags);
    }
  }

  private static boolean addErrors(DiagnosticCollector<JavaFileObject> collector, List<HarnessDiagnostic> out) {
    boolean any = false;
    for (Diagnostic<? extends JavaFileObject> d : collector.getDiagnostics()) {
      if (d.getKind() == Diagnostic.Kind.ERROR) {
        any = true;
        long line = d.getLineNumber() == Diagnostic.NOPOS ? 0 : d.getLineNumber();
        long col = d.getColumnNumber() == Diagnostic.NOPOS ? 0 : d.getColumnNumber();
        HarnessDiagnostic hd = new HarnessDiagnostic(line, col, d.getMessage(Locale.ROOT));
        if (!out.contains(hd)) {
          out.add(hd);
        }
      }
    }
    return any;
  }

  private static void checkImplementsHarness(Iterable<? extends CompilationUnitTree> units, Trees trees,
      Elements elements, Types types, String className, List<HarnessDiagnostic> diags) {
    TypeElement harness = elements.getTypeElement(Harness.class.getName());
    for (CompilationUnitTree unit : units) {
      for (Tree decl : unit.getTypeDecls()) {
        if (!(decl instanceof ClassTree ct)) {
          continue;
        }
        Element e = trees.getElement(TreePath.getPath(unit, ct));
        if (e instanceof TypeElement te && te.getQualifiedName().contentEquals(className)) {
          long line = TreePositions.lineAndColumn(trees, unit, ct)[0];
          if (te.getKind() != ElementKind.CLASS || te.getModifiers().contains(Modifier.ABSTRACT)) {
            diags.add(new HarnessDiagnostic(line, 1, className + " must be a concrete class"));
          } else if (!types.isAssignable(te.asType(), types.erasure(harness.asType()))) {
            diags.add(new HarnessDiagnostic(line, 1,
                "class " + className + " does not implement whale.harness.Harness"));
          }
          return;
        }
      }
    }
    diags.add(new HarnessDiagnostic(0, 0, "public class " + className + " not found"));
  }
}
