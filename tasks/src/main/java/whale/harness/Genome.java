package whale.harness;

import java.util.List;

/**
 * A template harness as a point in its task's small design space: one value per axis (prompt format,
 * votes, parsing, ...). A task writes its genome as a record with an enum of axes and describes both
 * in a {@link GenomeSpace}; encoding, neighbours and enumeration come from there, so that one
 * {@link TemplateSearch} serves every task.
 *
 * @param <G> the task's genome record
 * @param <A> the task's axis enum; a constant's name is what a candidate's {@code axis} reports
 */
public interface Genome<G extends Genome<G, A>, A extends Enum<A>> {

  /** The task's genome space. */
  GenomeSpace<G, A> space();

  /** Short readable name, e.g. "qa-chain-v3-r1-first-t8": the candidate's name. */
  String code();

  /** The {@code key=value;...} line embedded in the harness source. */
  default String encode() {
    return space().encode(self());
  }

  /** The value on one axis, as text. */
  default String value(A axis) {
    return space().value(self(), axis);
  }

  /** A copy with one axis set to the value written {@code text}. */
  default G with(A axis, String text) {
    return space().with(self(), axis, text);
  }

  /** Every genome that differs from this one on {@code axis} only, in the axis's value order. */
  default List<G> neighbours(A axis) {
    return space().neighbours(self(), axis);
  }

  @SuppressWarnings("unchecked")
  private G self() {
    return (G) this;
  }
}
