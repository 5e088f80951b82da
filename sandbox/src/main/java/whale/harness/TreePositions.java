package whale.harness;

import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.Tree;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.Trees;

/** Where a tree starts in its source, for diagnostics. */
final class TreePositions {
  private TreePositions() {}

  /** {line, column}, both 1-based, or {0, 0} when the tree has no position. */
  static long[] lineAndColumn(Trees trees, CompilationUnitTree unit, Tree tree) {
    SourcePositions sp = trees.getSourcePositions();
    long pos = sp.getStartPosition(unit, tree);
    LineMap lm = unit.getLineMap();
    if (pos < 0 || lm == null) {
      return new long[] {0, 0};
    }
    return new long[] {lm.getLineNumber(pos), lm.getColumnNumber(pos)};
  }
}
