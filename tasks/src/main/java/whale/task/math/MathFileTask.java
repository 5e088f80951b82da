package whale.task.math;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import whale.task.Jsonl;
import whale.task.LoadedSplits;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * The math task over dataset files instead of the generator: GSM8K-style JSONL ({@code question},
 * {@code answer} ending in {@code #### N}; verifier: exact numeric match) or MATH-style JSONL
 * ({@code problem}, {@code solution} with the answer in {@code \boxed{...}}, or an {@code answer}
 * field; verifier: strict {@code \boxed{}} extraction from the model's answer). Tools and the
 * pretraining corpus are the built-in math task's.
 */
public final class MathFileTask implements Task {
  /** The dataset formats and their {@code data.format} names. */
  public enum Format {
    GSM8K("gsm8k"),
    MATH("math");

    public final String specName;

    Format(String specName) {
      this.specName = specName;
    }

    public static Format of(String name) {
      for (Format f : values()) {
        if (f.specName.equals(name)) {
          return f;
        }
      }
      throw new IllegalArgumentException("unknown math data.format '" + name + "'; available: gsm8k, math");
    }
  }

  private final Format format;
  private final Map<Split, List<TaskProblem>> splits;
  private final MathTask builtin;

  private MathFileTask(Format format, Map<Split, List<TaskProblem>> splits, long seed) {
    this.format = format;
    this.splits = splits;
    this.builtin = new MathTask(seed, 0, 0, 0);
  }

  /** Loads and splits the files ({@code testFile} null: D_test comes from the train file too). */
  public static MathFileTask load(Format format, Path trainFile, Path testFile, long seed, int weight,
      int harness, int test) {
    List<TaskProblem> train = read(format, trainFile);
    List<TaskProblem> testProblems = testFile == null ? null : read(format, testFile);
    Map<Split, List<TaskProblem>> parts = LoadedSplits.partition(train, testProblems, seed, weight, harness,
        test, trainFile + (testFile == null ? "" : " and " + testFile));
    java.util.EnumMap<Split, List<TaskProblem>> splits = new java.util.EnumMap<>(Split.class);
    for (Map.Entry<Split, List<TaskProblem>> e : parts.entrySet()) {
      List<TaskProblem> list = new ArrayList<>();
      for (TaskProblem p : e.getValue()) {
        list.add(new TaskProblem(String.format("%s-%s-%s-%04d", MathTask.NAME, format.specName,
            e.getKey().name().toLowerCase(), list.size()), p.question(), p.answer()));
      }
      splits.put(e.getKey(), List.copyOf(list));
    }
    return new MathFileTask(format, splits, seed);
  }

  /** The problems of one file with their reference answers. */
  public static List<TaskProblem> read(Format format, Path file) {
    List<TaskProblem> out = new ArrayList<>();
    Jsonl.forEachObject(file, (line, o) -> {
      if (format == Format.GSM8K) {
        String q = Jsonl.requiredString(file, line, o, List.of("question"), "question");
        String solution = Jsonl.requiredString(file, line, o, List.of("answer"), "answer");
        String fin = MathAnswers.gsm8kFinal(solution);
        if (fin == null || MathAnswers.parseNumber(fin) == null) {
          throw new Jsonl.MalformedFileException(file, line,
              "answer must end in '#### <number>', got '" + tail(solution) + "'");
        }
        out.add(new TaskProblem("", q, MathAnswers.parseNumber(fin).toPlainString()));
      } else {
        String q = Jsonl.requiredString(file, line, o, List.of("problem", "question"), "problem");
        JsonNode given = o.get("answer");
        String ref;
        if (given != null && given.isTextual() && !given.asText().isBlank()) {
          ref = given.asText().trim();
        } else {
          String solution = Jsonl.requiredString(file, line, o, List.of("solution"), "solution");
          ref = MathAnswers.lastBoxed(solution);
          if (ref == null || ref.isBlank()) {
            throw new Jsonl.MalformedFileException(file, line,
                "solution has no complete \\boxed{...} answer (and there is no answer field)");
          }
        }
        out.add(new TaskProblem("", q, ref));
      }
    });
    if (out.isEmpty()) {
      throw new IllegalArgumentException(file + ": no problems");
    }
    return out;
  }

  private static String tail(String s) {
    String t = s.replace('\n', ' ');
    return t.length() > 40 ? "..." + t.substring(t.length() - 40) : t;
  }

  public Format format() {
    return format;
  }

  @Override
  public String name() {
    return MathTask.NAME;
  }

  @Override
  public List<TaskProblem> split(Split split) {
    return splits.get(split);
  }

  @Override
  public double verify(TaskProblem problem, String answer) {
    boolean ok = format == Format.GSM8K
        ? MathAnswers.numericMatch(answer, problem.answer())
        : MathAnswers.boxedMatch(answer, problem.answer());
    return ok ? 1.0 : 0.0;
  }

  @Override
  public boolean wellFormed(String answer) {
    return format == Format.GSM8K ? MathAnswers.parseNumber(answer) != null : MathAnswers.lastBoxed(answer) != null;
  }

  @Override
  public List<Tool> tools() {
    return builtin.tools();
  }

  /** The built-in task's generic arithmetic corpus (no dataset question is in it: it is generated). */
  @Override
  public List<String> pretrainingCorpus(long seed, int documents) {
    return builtin.pretrainingCorpus(seed, documents);
  }

  @Override
  public List<String> pretrainingCorpus(long seed, int documents, String corpus) {
    return builtin.pretrainingCorpus(seed, documents, corpus);
  }
}
