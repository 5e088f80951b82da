package whale.harness;

import com.sun.source.tree.BreakTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ContinueTree;
import com.sun.source.tree.DoWhileLoopTree;
import com.sun.source.tree.EnhancedForLoopTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.ForLoopTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.LabeledStatementTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MemberReferenceTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.ReturnTree;
import com.sun.source.tree.SwitchTree;
import com.sun.source.tree.ThrowTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TryTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.tree.WhileLoopTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.TreeScanner;
import com.sun.source.util.Trees;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.URI;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.PackageElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
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

  static final Set<String> ALLOWED_LANG = Set.of(
      "Object", "String", "StringBuilder", "StringBuffer", "Math", "StrictMath", "Integer", "Long",
      "Double", "Float", "Short", "Byte", "Character", "Boolean", "Number", "Void", "CharSequence",
      "Iterable", "Comparable", "AutoCloseable", "Cloneable", "Appendable", "Record", "Enum",
      "Override", "SuppressWarnings", "FunctionalInterface", "SafeVarargs", "Deprecated");

  static final Set<String> ALLOWED_PACKAGES = Set.of(
      "java.util", "java.util.regex", "java.util.function", "java.util.stream", "java.text");

  static final Set<String> DENIED_IN_ALLOWED_PACKAGES = Set.of(
      "java.util.ServiceLoader", "java.util.ResourceBundle", "java.util.PropertyResourceBundle",
      "java.util.ListResourceBundle", "java.util.Timer", "java.util.TimerTask", "java.util.Formatter",
      "java.util.stream.StreamSupport");

  static final Set<String> DENIED_MEMBERS = Set.of(
      "java.lang.Object.getClass", "java.lang.Integer.getInteger", "java.lang.Long.getLong",
      "java.lang.Boolean.getBoolean", "java.lang.Object.finalize", "java.util.Locale.setDefault",
      "java.util.TimeZone.setDefault",
      // the JVM's string pool is shared by every episode: intern() == s tells what others interned
      "java.lang.String.intern");

  /** Types whose values cannot change, so a static final field of one shares nothing mutable. */
  static final Set<String> IMMUTABLE_TYPES = Set.of(
      "java.lang.String", "java.lang.Integer", "java.lang.Long", "java.lang.Double", "java.lang.Float",
      "java.lang.Short", "java.lang.Byte", "java.lang.Character", "java.lang.Boolean",
      "java.util.regex.Pattern");

  /** Collection types allowed in a static final field when built by their unmodifiable factories. */
  static final Set<String> UNMODIFIABLE_FACTORY_TYPES = Set.of(
      "java.util.List", "java.util.Set", "java.util.Map", "java.util.Collection");

  /** Members of Throwable that exceptions may use although the type Throwable itself is denied. */
  static final Set<String> THROWABLE_MEMBERS = Set.of(
      "<init>", "getMessage", "getLocalizedMessage", "toString", "getCause", "addSuppressed", "getSuppressed");

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
      JavaFileObject file = new SourceFile(className, source);
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
          long line = position(trees, unit, ct)[0];
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

  private static long[] position(Trees trees, CompilationUnitTree unit, Tree tree) {
    SourcePositions sp = trees.getSourcePositions();
    long pos = sp.getStartPosition(unit, tree);
    LineMap lm = unit.getLineMap();
    if (pos < 0 || lm == null) {
      return new long[] {0, 0};
    }
    return new long[] {lm.getLineNumber(pos), lm.getColumnNumber(pos)};
  }

  /** Walks every name the source uses and rejects what is not on the allow-list. */
  private static final class AllowListScanner extends TreePathScanner<Void, Void> {
    private final Trees trees;
    private final Elements elements;
    private final Types types;
    private final CompilationUnitTree unit;
    private final List<HarnessDiagnostic> diags;
    private final TypeMirror exception;

    AllowListScanner(Trees trees, Elements elements, Types types, CompilationUnitTree unit,
        List<HarnessDiagnostic> diags) {
      this.trees = trees;
      this.elements = elements;
      this.types = types;
      this.unit = unit;
      this.diags = diags;
      this.exception = elements.getTypeElement("java.lang.Exception").asType();
    }

    @Override
    public Void visitIdentifier(IdentifierTree node, Void unused) {
      check(node);
      return super.visitIdentifier(node, unused);
    }

    @Override
    public Void visitMemberSelect(MemberSelectTree node, Void unused) {
      if (node.getIdentifier().contentEquals("class")) {
        report(node, "class literals (reflection) are not allowed");
        return null;
      }
      check(node);
      return super.visitMemberSelect(node, unused);
    }

    @Override
    public Void visitMemberReference(MemberReferenceTree node, Void unused) {
      check(node);
      return super.visitMemberReference(node, unused);
    }

    @Override
    public Void visitNewClass(NewClassTree node, Void unused) {
      check(node);
      return super.visitNewClass(node, unused);
    }

    @Override
    public Void visitVariable(VariableTree node, Void unused) {
      Element e = trees.getElement(getCurrentPath());
      if (e != null && e.getKind() == ElementKind.FIELD && e.getModifiers().contains(Modifier.STATIC)) {
        if (!e.getModifiers().contains(Modifier.FINAL)) {
          report(node, "static field '" + e.getSimpleName()
              + "' must be final: episodes run concurrently and must not share mutable state");
        } else if (!holdsImmutable(e.asType(), node.getInitializer())) {
          report(node, "static field '" + e.getSimpleName() + "' of type " + e.asType()
              + " may hold mutable state shared between episodes; static fields may only hold primitives,"
              + " String, boxed primitives, Pattern, immutable records or enums, List/Set/Map built with"
              + " List.of/Set.of/Map.of/copyOf, or a lambda");
        }
      } else if (e != null && e.getKind() == ElementKind.FIELD
          && e.getEnclosingElement().getKind() == ElementKind.ENUM
          && (!e.getModifiers().contains(Modifier.FINAL) || !holdsImmutable(e.asType(), node.getInitializer()))) {
        report(node, "enum field '" + e.getSimpleName() + "' must be final and of an immutable type (primitive,"
            + " String, boxed primitive, Pattern, immutable record or enum): an enum constant is one instance"
            + " shared by every episode");
      }
      return super.visitVariable(node, unused);
    }

    @Override
    public Void visitMethod(MethodTree node, Void unused) {
      if (node.getModifiers().getFlags().contains(Modifier.NATIVE)) {
        report(node, "native methods are not allowed");
      }
      if (node.getName().contentEquals("finalize") && node.getParameters().isEmpty()
          && !node.getModifiers().getFlags().contains(Modifier.STATIC)) {
        report(node, "finalize() may not be overridden: it would run on the JVM's Finalizer thread after"
            + " the episode has ended");
      }
      return super.visitMethod(node, unused);
    }

    @Override
    public Void visitTry(TryTree node, Void unused) {
      if (node.getFinallyBlock() != null) {
        new FinallyScanner().scan(node.getFinallyBlock(), null);
      }
      return super.visitTry(node, unused);
    }

    /**
     * Finds statements that complete a finally block abruptly: they would discard the exception or
     * Error in flight (a StackOverflowError, the stop of a runaway episode), which harness code may
     * not catch. Lambdas and classes declared inside the block are their own scope.
     */
    private final class FinallyScanner extends TreeScanner<Void, Void> {
      private int loops;
      private int breakTargets;
      private final Set<String> labels = new java.util.HashSet<>();

      @Override
      public Void visitReturn(ReturnTree node, Void unused) {
        abrupt(node, "return");
        return super.visitReturn(node, unused);
      }

      @Override
      public Void visitThrow(ThrowTree node, Void unused) {
        abrupt(node, "throw");
        return super.visitThrow(node, unused);
      }

      @Override
      public Void visitBreak(BreakTree node, Void unused) {
        if (node.getLabel() == null ? breakTargets == 0 : !labels.contains(node.getLabel().toString())) {
          abrupt(node, "break");
        }
        return null;
      }

      @Override
      public Void visitContinue(ContinueTree node, Void unused) {
        if (node.getLabel() == null ? loops == 0 : !labels.contains(node.getLabel().toString())) {
          abrupt(node, "continue");
        }
        return null;
      }

      @Override
      public Void visitLabeledStatement(LabeledStatementTree node, Void unused) {
        labels.add(node.getLabel().toString());
        return super.visitLabeledStatement(node, unused);
      }

      @Override
      public Void visitForLoop(ForLoopTree node, Void unused) {
        return loop(() -> super.visitForLoop(node, unused));
      }

      @Override
      public Void visitEnhancedForLoop(EnhancedForLoopTree node, Void unused) {
        return loop(() -> super.visitEnhancedForLoop(node, unused));
      }

      @Override
      public Void visitWhileLoop(WhileLoopTree node, Void unused) {
        return loop(() -> super.visitWhileLoop(node, unused));
      }

      @Override
      public Void visitDoWhileLoop(DoWhileLoopTree node, Void unused) {
        return loop(() -> super.visitDoWhileLoop(node, unused));
      }

      @Override
      public Void visitSwitch(SwitchTree node, Void unused) {
        breakTargets++;
        try {
          return super.visitSwitch(node, unused);
        } finally {
          breakTargets--;
        }
      }

      @Override
      public Void visitLambdaExpression(LambdaExpressionTree node, Void unused) {
        return null;
      }

      @Override
      public Void visitClass(ClassTree node, Void unused) {
        return null;
      }

      private Void loop(Supplier<Void> body) {
        loops++;
        breakTargets++;
        try {
          return body.get();
        } finally {
          loops--;
          breakTargets--;
        }
      }

      private void abrupt(Tree node, String what) {
        report(node, "'" + what + "' may not leave a finally block: it would discard an exception or"
            + " Error in flight (e.g. a StackOverflowError)");
      }
    }

    /** Whether a final field of {@code type} (with this initializer, if any) can share no mutable state. */
    private boolean holdsImmutable(TypeMirror type, ExpressionTree init) {
      if (type.getKind().isPrimitive() || isImmutableValue(type, new java.util.HashSet<>())) {
        return true;
      }
      if (!(type instanceof DeclaredType dt) || !(dt.asElement() instanceof TypeElement te)) {
        return false;
      }
      String qn = te.getQualifiedName().toString();
      if (qn.startsWith("java.util.function.")) {
        return init != null && (init.getKind() == Tree.Kind.LAMBDA_EXPRESSION
            || init.getKind() == Tree.Kind.MEMBER_REFERENCE);
      }
      if (UNMODIFIABLE_FACTORY_TYPES.contains(qn) && init instanceof MethodInvocationTree call) {
        Element m = trees.getElement(new TreePath(getCurrentPath(), call));
        if (m != null && m.getEnclosingElement() instanceof TypeElement owner
            && Set.of("java.util.List", "java.util.Set", "java.util.Map")
                .contains(owner.getQualifiedName().toString())
            && Set.of("of", "copyOf", "ofEntries").contains(m.getSimpleName().toString())) {
          for (TypeMirror arg : dt.getTypeArguments()) {
            if (!isImmutableValue(arg, new java.util.HashSet<>())) {
              return false;
            }
          }
          return true;
        }
      }
      return false;
    }

    /** Immutable value types: {@link #IMMUTABLE_TYPES}, this source's enums and records of such. */
    private boolean isImmutableValue(TypeMirror type, Set<String> seen) {
      if (type.getKind().isPrimitive()) {
        return true;
      }
      if (!(type instanceof DeclaredType dt) || !(dt.asElement() instanceof TypeElement te)) {
        return false;
      }
      String qn = te.getQualifiedName().toString();
      if (IMMUTABLE_TYPES.contains(qn)) {
        return true;
      }
      if (!isOwn(te) || !seen.add(qn)) {
        return te.getKind() == ElementKind.ENUM && isOwn(te);
      }
      if (te.getKind() == ElementKind.ENUM) {
        return true; // its fields are checked where the enum is declared
      }
      if (te.getKind() == ElementKind.RECORD) {
        for (Element m : te.getEnclosedElements()) {
          if (m.getKind() == ElementKind.FIELD && !m.getModifiers().contains(Modifier.STATIC)
              && !isImmutableValue(m.asType(), seen)) {
            return false;
          }
        }
        return true;
      }
      return false;
    }

    private void check(Tree node) {
      Element e = trees.getElement(getCurrentPath());
      if (e == null) {
        return;
      }
      String problem = switch (e.getKind()) {
        case PACKAGE, LOCAL_VARIABLE, PARAMETER, EXCEPTION_PARAMETER, RESOURCE_VARIABLE,
            TYPE_PARAMETER, BINDING_VARIABLE -> null;
        case CLASS, INTERFACE, ENUM, RECORD, ANNOTATION_TYPE -> checkType((TypeElement) e);
        default -> checkMember(e);
      };
      if (problem != null) {
        report(node, problem);
      }
    }

    private String checkMember(Element member) {
      Element owner = member.getEnclosingElement();
      if (!(owner instanceof TypeElement ownerType)) {
        return null;
      }
      String name = member.getSimpleName().toString();
      if (ownerType.getQualifiedName().contentEquals("Array")
          && (name.equals("length") || name.equals("clone"))) {
        return null; // array.length / array.clone(): javac's synthetic array class
      }
      if (ownerType.getQualifiedName().contentEquals("java.lang.Throwable")
          && THROWABLE_MEMBERS.contains(name)) {
        return null;
      }
      String typeProblem = checkType(ownerType);
      if (typeProblem != null) {
        return typeProblem;
      }
      if (DENIED_MEMBERS.contains(ownerType.getQualifiedName() + "." + name)) {
        return "forbidden: " + ownerType.getQualifiedName() + "." + name;
      }
      if (name.startsWith("parallel") && !isOwn(ownerType)) {
        return "forbidden: " + ownerType.getQualifiedName() + "." + name
            + " (parallel execution is not allowed)";
      }
      return null;
    }

    private boolean isOwn(TypeElement te) {
      return trees.getPath(te) != null && trees.getPath(te).getCompilationUnit() == unit;
    }

    private String checkType(TypeElement te) {
      if (isOwn(te)) {
        return null;
      }
      TypeElement top = te;
      while (top.getEnclosingElement() instanceof TypeElement outer) {
        top = outer;
      }
      String qn = top.getQualifiedName().toString();
      PackageElement pkg = elements.getPackageOf(top);
      String pn = pkg.getQualifiedName().toString();
      if (API_CLASSES.contains(qn)) {
        return null;
      }
      if (pn.equals("java.lang")) {
        if (ALLOWED_LANG.contains(top.getSimpleName().toString())) {
          return null;
        }
        if (types.isSubtype(types.erasure(top.asType()), types.erasure(exception))) {
          return null;
        }
        return "forbidden: " + qn + " (only basic java.lang types may be used: no System, Runtime,"
            + " Thread, Class, ClassLoader, ProcessBuilder, Throwable or Error)";
      }
      if (ALLOWED_PACKAGES.contains(pn)) {
        if (DENIED_IN_ALLOWED_PACKAGES.contains(qn)) {
          return "forbidden: " + qn;
        }
        return null;
      }
      return "forbidden: " + qn + " (package " + pn + " is not allowed; harness code may use the"
          + " harness API, basic java.lang types, java.util, java.util.regex, java.util.function,"
          + " java.util.stream and java.text)";
    }

    private void report(Tree node, String message) {
      long[] p = position(trees, unit, node);
      HarnessDiagnostic d = new HarnessDiagnostic(p[0], p[1], message);
      if (!diags.contains(d)) {
        diags.add(d);
      }
    }
  }

  private static final class SourceFile extends SimpleJavaFileObject {
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

  private static final class MemoryFileManager extends ForwardingJavaFileManager<JavaFileManager> {
    final Map<String, byte[]> classes = new ConcurrentHashMap<>();

    MemoryFileManager(JavaFileManager delegate) {
      super(delegate);
    }

    @Override
    public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
        FileObject sibling) {
      return new ClassFile(className, classes);
    }
  }

  /** Exposes only the harness API classes of the host, and the JDK through the platform loader. */
  private static final class ApiClassLoader extends ClassLoader {
    private final ClassLoader host;

    ApiClassLoader(ClassLoader host) {
      super("whale-harness-api", ClassLoader.getPlatformClassLoader());
      this.host = host;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (API_CLASSES.contains(name)) {
        return host.loadClass(name);
      }
      return super.loadClass(name, resolve);
    }
  }

  /** Defines the compiled classes of one harness. */
  private static final class MemoryClassLoader extends ClassLoader {
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
}
