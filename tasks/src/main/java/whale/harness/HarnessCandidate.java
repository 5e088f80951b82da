package whale.harness;

/**
 * A proposed harness.
 *
 * @param name unique, readable name
 * @param hypothesis why this change should help
 * @param changes short description of the change against its parent
 * @param axis what was changed (for template candidates a genome axis name in lower case, e.g. {@code MathGenome.Axis})
 * @param source the full Java source of one public class implementing {@link Harness}
 */
public record HarnessCandidate(String name, String hypothesis, String changes, String axis, String source) {}
