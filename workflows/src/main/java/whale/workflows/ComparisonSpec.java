package whale.workflows;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * A comparison: one experiment run under several schedules and seeds, side by side, as in the paper's
 * results table ({@code examples/math-compare.json}).
 *
 * @param experiment the shared spec; its {@code schedule} and {@code seed} are replaced per cell
 * @param schedules {@link Schedule} spellings as written (checked by {@link #problems}): whale,
 *     whale-adaptive, weight-only, harness-only, stagewise, fst
 * @param seeds one run per schedule and seed; the data seed stays the experiment's, so every cell
 *     sees the same problems
 */
public record ComparisonSpec(
    String name,
    ExperimentSpec experiment,
    List<String> schedules,
    List<Long> seeds,
    @JsonAnySetter @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, Object> unknown) {
  public ComparisonSpec {
    name = name == null ? "comparison" : name;
    experiment = experiment == null ? ExperimentSpec.defaults() : experiment;
    schedules = schedules == null ? Spelled.inOrder(Schedule.class) : List.copyOf(schedules);
    seeds = seeds == null ? List.of(1L, 2L) : List.copyOf(seeds);
    unknown = unknown == null ? Map.of() : Map.copyOf(unknown);
  }

  /** Every problem, each naming its field; empty when the comparison can run. */
  public List<String> problems() {
    List<String> out = new java.util.ArrayList<>();
    for (String k : new java.util.TreeSet<>(unknown.keySet())) {
      out.add(k + ": unknown field");
    }
    if (name.isBlank() || name.length() > 100) {
      out.add("name: must be 1 to 100 characters, got '" + name + "'");
    }
    if (schedules.isEmpty()) {
      out.add("schedules: at least one schedule");
    }
    if (seeds.isEmpty()) {
      out.add("seeds: at least one seed");
    }
    if (schedules.size() * seeds.size() > 64) {
      out.add("schedules x seeds: at most 64 runs, got " + schedules.size() * seeds.size());
    }
    if (schedules.stream().distinct().count() != schedules.size()) {
      out.add("schedules: each schedule once, got " + schedules);
    }
    if (seeds.stream().distinct().count() != seeds.size()) {
      out.add("seeds: each seed once, got " + seeds);
    }
    for (String s : schedules) {
      if (Spelled.find(Schedule.class, s).isEmpty()) {
        out.add("schedules: '" + s + "' is not one of " + Spelled.spellings(Schedule.class));
      }
    }
    for (String p : SpecValidator.problems(experiment)) {
      out.add("experiment." + p);
    }
    return out;
  }
}
