package whale.task.math;

/** Lets other test packages replay one operation sentence. */
public final class MathTaskTestAccess {
  private MathTaskTestAccess() {}

  public static int apply(int value, String sentence) {
    return MathTaskTest.apply(value, sentence);
  }
}
