package whale.harness;

import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.MemberReferenceTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TryTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.PackageElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;

/**
 * Walks every name the source uses and rejects what is not on the allow-list, and the declarations
 * that would let episodes share state or outlive themselves ({@link HarnessCompiler} states the rules).
 * Runs on the analyzed tree, before any bytecode is generated; each problem becomes one diagnostic
 * with its line, and the walk goes on so the proposer sees them all.
 */
final class AllowListScanner extends TreePathScanner<Void, Void> {
  private static final Set<String> ALLOWED_LANG = Set.of(
      "Object", "String", "StringBuilder", "StringBuffer", "Math", "StrictMath", "Integer", "Long",
      "Double", "Float", "Short", "Byte", "Character", "Boolean", "Number", "Void", "CharSequence",
      "Iterable", "Comparable", "AutoCloseable", "Cloneable", "Appendable", "Record", "Enum",
      "Override", "SuppressWarnings", "FunctionalInterface", "SafeVarargs", "Deprecated");

  private static final Set<String> ALLOWED_PACKAGES = Set.of(
      "java.util", "java.util.regex", "java.util.function", "java.util.stream", "java.text");

  private static final Set<String> DENIED_IN_ALLOWED_PACKAGES = Set.of(
      "java.util.ServiceLoader", "java.util.ResourceBundle", "java.util.PropertyResourceBundle",
      "java.util.ListResourceBundle", "java.util.Timer", "java.util.TimerTask", "java.util.Formatter",
      "java.util.stream.StreamSupport");

  private static final Set<String> DENIED_MEMBERS = Set.of(
      "java.lang.Object.getClass", "java.lang.Integer.getInteger", "java.lang.Long.getLong",
      "java.lang.Boolean.getBoolean", "java.lang.Object.finalize", "java.util.Locale.setDefault",
      "java.util.TimeZone.setDefault",
      // the JVM's string pool is shared by every episode: intern() == s tells what others interned
      "java.lang.String.intern");

  /** Types whose values cannot change, so a static final field of one shares nothing mutable. */
  private static final Set<String> IMMUTABLE_TYPES = Set.of(
      "java.lang.String", "java.lang.Integer", "java.lang.Long", "java.lang.Double", "java.lang.Float",
      "java.lang.Short", "java.lang.Byte", "java.lang.Character", "java.lang.Boolean",
      "java.util.regex.Pattern");

  /** Collection types allowed in a static final field when built by their unmodifiable factories. */
  private static final Set<String> UNMODIFIABLE_FACTORY_TYPES = Set.of(
      "java.util.List", "java.util.Set", "java.util.Map", "java.util.Collection");

  /** Members of Throwable that exceptions may use although the type Throwable itself is denied. */
  private static final Set<String> THROWABLE_MEMBERS = Set.of(
      "<init>", "getMessage", "getLocalizedMessage", "toString", "getCause", "addSuppressed", "getSuppressed");

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
      new FinallyScanner(this::report).scan(node.getFinallyBlock(), null);
    }
    return super.visitTry(node, unused);
  }

  /** Whether a final field of {@code type} (with this initializer, if any) can share no mutable state. */
  private boolean holdsImmutable(TypeMirror type, ExpressionTree init) {
    if (type.getKind().isPrimitive() || isImmutableValue(type, new HashSet<>())) {
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
          if (!isImmutableValue(arg, new HashSet<>())) {
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
    if (HarnessCompiler.API_CLASSES.contains(qn)) {
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
    long[] p = TreePositions.lineAndColumn(trees, unit, node);
    HarnessDiagnostic d = new HarnessDiagnostic(p[0], p[1], message);
    if (!diags.contains(d)) {
      diags.add(d);
    }
  }
}
