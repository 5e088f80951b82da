package whale.harness;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A task's genome space: its axes, each with its key in the source and its values, how a genome is
 * built from one value per axis and how it renders to harness source. It writes and reads the
 * {@code key=value;...} line that every template harness carries as a {@code // WHALE-GENOME:}
 * comment, which is how the search reads a genome back from an archived candidate.
 */
public final class GenomeSpace<G extends Genome<G, A>, A extends Enum<A>> {
  public static final String MARKER = "WHALE-GENOME:";
  /** The package every template harness is emitted in. */
  public static final String PACKAGE = "whale.generated";
  private static final Pattern IN_SOURCE = Pattern.compile(Pattern.quote(MARKER) + "\\s*(\\S+)");

  /** One axis: its key in the genome line, the genome's value on it, its values in the order tried. */
  private record Gene<G>(String key, Function<G, ?> of, List<?> values, Object omitted) {}

  private final List<A> axes;
  private final Map<A, Gene<G>> genes;
  private final Function<List<Object>, G> make;
  private final Function<G, String> render;

  private GenomeSpace(Map<A, Gene<G>> genes, Function<List<Object>, G> make, Function<G, String> render) {
    this.genes = genes;
    this.axes = List.copyOf(genes.keySet());
    this.make = make;
    this.render = render;
  }

  /** Describes the axes of {@code axisType} one by one, then {@link Builder#build}. */
  public static <G extends Genome<G, A>, A extends Enum<A>> Builder<G, A> of(Class<A> axisType) {
    return new Builder<>(axisType);
  }

  public static final class Builder<G extends Genome<G, A>, A extends Enum<A>> {
    private final Class<A> axisType;
    private final Map<A, Gene<G>> genes;

    private Builder(Class<A> axisType) {
      this.axisType = axisType;
      this.genes = new EnumMap<>(axisType);
    }

    /**
     * @param key the axis's name in the genome line
     * @param of the genome's value on it
     * @param values its values; neighbours and the enumeration follow this order
     */
    public Builder<G, A> axis(A axis, String key, Function<G, ?> of, List<?> values) {
      genes.put(axis, new Gene<>(key, of, List.copyOf(values), null));
      return this;
    }

    /**
     * An axis added after genomes were archived: {@code omitted} is its value when the genome line
     * lacks the key, and is left out of the line, so every genome written before keeps its line,
     * source and name.
     */
    public Builder<G, A> axis(A axis, String key, Function<G, ?> of, List<?> values, Object omitted) {
      genes.put(axis, new Gene<>(key, of, List.copyOf(values), omitted));
      return this;
    }

    /**
     * @param make the genome with these values, one per axis in declaration order
     * @param render the readable Java source of a genome's harness, with {@link #encode} embedded
     */
    public GenomeSpace<G, A> build(Function<List<Object>, G> make, Function<G, String> render) {
      for (A a : axisType.getEnumConstants()) {
        if (!genes.containsKey(a)) {
          throw new IllegalStateException("genome axis " + a + " has no values");
        }
      }
      return new GenomeSpace<>(new EnumMap<>(genes), make, render);
    }
  }

  /**
   * The start of a template harness's source: its package, the {@code imports} and then the harness
   * API's, and the genome line ({@link #encode}) by which the search reads the candidate back.
   */
  public static String header(String encoded, String... imports) {
    StringBuilder s = new StringBuilder("package " + PACKAGE + ";\n\n");
    for (String i : new java.util.LinkedHashSet<>(List.of(imports))) {
      s.append("import ").append(i).append(";\n");
    }
    for (String i : List.of("Harness", "HarnessContext", "HarnessResult")) {
      s.append("import whale.harness.").append(i).append(";\n");
    }
    return s.append("import whale.task.Problem;\n\n// ").append(MARKER).append(' ').append(encoded).append('\n')
        .toString();
  }

  /** The axes in declaration order. */
  public List<A> axes() {
    return axes;
  }

  public String render(G g) {
    return render.apply(g);
  }

  /** e.g. {@code board=PIECES;cue=MATE;votes=3;retries=1;parse=FIRST_MOVE}. */
  public String encode(G g) {
    StringBuilder s = new StringBuilder();
    for (A a : axes) {
      Gene<G> gene = genes.get(a);
      if (gene.omitted() != null && gene.omitted().equals(gene.of().apply(g))) {
        continue;
      }
      s.append(s.isEmpty() ? "" : ";").append(gene.key()).append('=').append(value(g, a));
    }
    return s.toString();
  }

  /** The genome {@code encoded}; an error names the key or value that does not belong to this space. */
  public G parse(String encoded) {
    Object[] values = new Object[axes.size()];
    for (String kv : encoded.trim().split(";")) {
      String[] x = kv.split("=", 2);
      if (x.length != 2) {
        throw new IllegalArgumentException("bad genome " + encoded);
      }
      A axis = axes.stream().filter(a -> genes.get(a).key().equals(x[0])).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("unknown genome key " + x[0] + " in " + encoded));
      values[axes.indexOf(axis)] = valueOf(axis, x[1]);
    }
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        values[i] = genes.get(axes.get(i)).omitted();
      }
      if (values[i] == null) {
        throw new IllegalArgumentException("incomplete genome " + encoded + ": no " + genes.get(axes.get(i)).key());
      }
    }
    return make.apply(List.of(values));
  }

  /** The genome embedded in a source, or null when there is none or it is another task's. */
  public G fromSource(String source) {
    if (source == null) {
      return null;
    }
    Matcher m = IN_SOURCE.matcher(source);
    if (!m.find()) {
      return null;
    }
    try {
      return parse(m.group(1));
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** {@code g}'s value on {@code axis}, as text (an enum constant's name or a number). */
  public String value(G g, A axis) {
    return String.valueOf(genes.get(axis).of().apply(g));
  }

  /** A copy of {@code g} with {@code axis} set to the value written {@code text}. */
  public G with(G g, A axis, String text) {
    return set(g, axis, valueOf(axis, text));
  }

  /** Every genome that differs from {@code g} on {@code axis} only. */
  public List<G> neighbours(G g, A axis) {
    Object current = genes.get(axis).of().apply(g);
    List<G> out = new ArrayList<>();
    for (Object v : genes.get(axis).values()) {
      if (!v.equals(current)) {
        out.add(set(g, axis, v));
      }
    }
    return out;
  }

  /** All genomes, the last axis varying fastest. */
  public List<G> all() {
    List<List<Object>> rows = List.of(List.of());
    for (A a : axes) {
      List<List<Object>> next = new ArrayList<>();
      for (List<Object> row : rows) {
        for (Object v : genes.get(a).values()) {
          List<Object> r = new ArrayList<>(row);
          r.add(v);
          next.add(r);
        }
      }
      rows = next;
    }
    return rows.stream().map(make).toList();
  }

  private Object valueOf(A axis, String text) {
    for (Object v : genes.get(axis).values()) {
      // numbers as Integer.parseInt reads them, enum constants by name
      boolean same = v instanceof Integer i ? text.matches("[+-]?\\d{1,9}") && Integer.parseInt(text) == i
          : v.toString().equals(text);
      if (same) {
        return v;
      }
    }
    throw new IllegalArgumentException(genes.get(axis).key() + "=" + text + " is not one of "
        + genes.get(axis).values());
  }

  private G set(G g, A axis, Object value) {
    List<Object> values = new ArrayList<>();
    for (A a : axes) {
      values.add(a == axis ? value : genes.get(a).of().apply(g));
    }
    return make.apply(values);
  }
}
