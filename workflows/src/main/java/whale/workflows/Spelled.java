package whale.workflows;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * A closed set of values with the spellings spec files and JSON payloads use ("whale-adaptive",
 * "float16"): each constant's {@link #json} is its only form on the wire (and its
 * {@code toString}), so an enum field serializes exactly as the string it replaced.
 */
public interface Spelled {
  /** The spelling in spec files and in every JSON payload. */
  String json();

  /** The constant spelled {@code json}, if there is one. */
  static <E extends Enum<E> & Spelled> Optional<E> find(Class<E> type, String json) {
    return Arrays.stream(type.getEnumConstants()).filter(e -> e.json().equals(json)).findFirst();
  }

  /**
   * The constant spelled {@code json}, or an {@link IllegalArgumentException} that names
   * {@code field} and lists what it may be ("model.dtype: must be one of [float16, float32], got
   * 'int8'", the wording {@link SpecValidator} uses).
   */
  static <E extends Enum<E> & Spelled> E parse(Class<E> type, String field, String json) {
    return find(type, json).orElseThrow(() -> new IllegalArgumentException(
        field + ": must be one of " + spellings(type) + ", got '" + json + "'"));
  }

  /** Every spelling of {@code type}, sorted. */
  static <E extends Enum<E> & Spelled> TreeSet<String> spellings(Class<E> type) {
    TreeSet<String> out = new TreeSet<>();
    for (E e : type.getEnumConstants()) {
      out.add(e.json());
    }
    return out;
  }

  /** Every spelling of {@code type}, in declaration order. */
  static <E extends Enum<E> & Spelled> List<String> inOrder(Class<E> type) {
    return Arrays.stream(type.getEnumConstants()).map(Spelled::json).toList();
  }
}
