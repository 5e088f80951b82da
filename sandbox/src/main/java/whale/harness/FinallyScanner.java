package whale.harness;

import com.sun.source.tree.BreakTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.ContinueTree;
import com.sun.source.tree.DoWhileLoopTree;
import com.sun.source.tree.EnhancedForLoopTree;
import com.sun.source.tree.ForLoopTree;
import com.sun.source.tree.LabeledStatementTree;
import com.sun.source.tree.LambdaExpressionTree;
import com.sun.source.tree.ReturnTree;
import com.sun.source.tree.SwitchTree;
import com.sun.source.tree.ThrowTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.WhileLoopTree;
import com.sun.source.util.TreeScanner;
import java.util.HashSet;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Finds statements that complete a finally block abruptly: they would discard the exception or
 * Error in flight (a StackOverflowError, the stop of a runaway episode), which harness code may
 * not catch. Lambdas and classes declared inside the block are their own scope.
 */
final class FinallyScanner extends TreeScanner<Void, Void> {
  // AllowListScanner's report, so these problems join its list of diagnostics
  private final BiConsumer<Tree, String> report;
  private int loops;
  private int breakTargets;
  private final Set<String> labels = new HashSet<>();

  FinallyScanner(BiConsumer<Tree, String> report) {
    this.report = report;
  }

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
    report.accept(node, "'" + what + "' may not leave a finally block: it would discard an exception or"
        + " Error in flight (e.g. a StackOverflowError)");
  }
}
