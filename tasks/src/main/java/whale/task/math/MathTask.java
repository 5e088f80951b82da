package whale.task.math;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import whale.chat.ChatTemplate;
import whale.chat.FunctionCall;
import whale.chat.Message;
import whale.task.Split;
import whale.task.Task;
import whale.task.TaskProblem;
import whale.task.Tool;

/**
 * Procedurally generated multi-step arithmetic word problems ("Tom has 12 apples. He buys 7 more. He
 * gives 5 to Ann. How many apples does Tom have?" → "14"), 2–3 operations, every number and every
 * intermediate value in 0..MAX_VALUE. The pretraining corpus holds one-step problems of the same wording
 * family plus bare arithmetic lines, so a pretrained model solves one step fairly well and chains of
 * steps poorly.
 */
public final class MathTask implements Task {
  public static final String NAME = "math";
  public static final int DEFAULT_WEIGHT_SIZE = 512;
  public static final int DEFAULT_HARNESS_SIZE = 256;
  public static final int DEFAULT_TEST_SIZE = 128;
  /** Longest question the generator emits. */
  public static final int MAX_QUESTION_CHARS = 110;

  private static final String[] MALE = {"Tom", "Sam", "Ben", "Max", "Leo", "Dan"};
  private static final String[] FEMALE = {"Ann", "Mia", "Eva", "Zoe", "Ivy", "Amy"};
  private static final String[] OBJECTS = {
    "apples", "pens", "cards", "eggs", "coins", "books", "shells", "stamps", "plums", "cakes"
  };
  private static final Set<String> EDIBLE = Set.of("apples", "eggs", "plums", "cakes");
  /**
   * Difficulty, sized for a ~100k-parameter character model that must learn within a CPU run: every
   * value stays in 0..MAX_VALUE, problems start at most at MAX_START, and each step changes the value
   * by at most MAX_STEP.
   */
  static final int MAX_VALUE = 40;
  static final int MAX_START = 20;
  static final int MAX_STEP = 9;

  private static final Pattern INTEGER = Pattern.compile("[+-]?\\d{1,9}");

  private final long seed;
  private final Map<Split, List<TaskProblem>> splits = new EnumMap<>(Split.class);
  private final List<Tool> tools = List.of(new SentencesTool(), new CalcTool());

  public MathTask(long seed) {
    this(seed, DEFAULT_WEIGHT_SIZE, DEFAULT_HARNESS_SIZE, DEFAULT_TEST_SIZE);
  }

  public MathTask(long seed, int weightSize, int harnessSize, int testSize) {
    if (weightSize < 0 || harnessSize < 0 || testSize < 0) {
      throw new IllegalArgumentException("split sizes must be >= 0");
    }
    this.seed = seed;
    Random rnd = new Random(seed);
    Set<String> seen = new HashSet<>();
    int[] sizes = {weightSize, harnessSize, testSize};
    Split[] order = {Split.WEIGHT, Split.HARNESS, Split.TEST};
    for (int s = 0; s < order.length; s++) {
      List<TaskProblem> list = new ArrayList<>(sizes[s]);
      int attempts = 0;
      while (list.size() < sizes[s]) {
        if (++attempts > 1000 * (sizes[s] + 10)) {
          throw new IllegalStateException("cannot generate enough distinct problems");
        }
        Generated g = generate(rnd, 2 + rnd.nextInt(2));
        if (seen.add(g.question)) {
          String id = String.format("%s-%s-%04d", NAME, order[s].name().toLowerCase(), list.size());
          list.add(new TaskProblem(id, g.question, Integer.toString(g.answer)));
        }
      }
      splits.put(order[s], Collections.unmodifiableList(list));
    }
  }

  public long seed() {
    return seed;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<TaskProblem> split(Split split) {
    return splits.get(split);
  }

  /** 1.0 only when the trimmed answer is an integer equal to the reference, else 0.0. */
  @Override
  public double verify(TaskProblem problem, String answer) {
    Integer got = parseStrictInteger(answer);
    Integer want = parseStrictInteger(problem.answer());
    return got != null && got.equals(want) ? 1.0 : 0.0;
  }

  @Override
  public boolean wellFormed(String answer) {
    return parseStrictInteger(answer) != null;
  }

  /** The integer that the trimmed text is, or null when it is anything else. */
  public static Integer parseStrictInteger(String text) {
    if (text == null) {
      return null;
    }
    String t = text.trim();
    if (!INTEGER.matcher(t).matches()) {
      return null;
    }
    return Integer.parseInt(t.startsWith("+") ? t.substring(1) : t);
  }

  @Override
  public List<Tool> tools() {
    return tools;
  }

  /**
   * One-step problems "Q: <question>\nA: <n>\n" (about 60%) and bare arithmetic lines "12+7=19\n",
   * "19-5=14\n", "7*2=14\n". No document contains a multi-step question.
   */
  @Override
  public List<String> pretrainingCorpus(long corpusSeed, int documents) {
    Random rnd = new Random(corpusSeed ^ 0x5DEECE66DL);
    List<String> docs = new ArrayList<>(documents);
    for (int i = 0; i < documents; i++) {
      if (rnd.nextInt(10) < 6) {
        // One-step problems start anywhere in 0..MAX_VALUE: a least-to-most harness asks exactly
        // such questions about intermediate values, which can exceed MAX_START.
        Generated g = generate(rnd, 1, 1 + rnd.nextInt(MAX_VALUE - 1));
        docs.add("Q: " + g.question + "\nA: " + g.answer + "\n");
      } else {
        int kind = rnd.nextInt(5);
        if (kind < 2) {
          int a = rnd.nextInt(MAX_VALUE);
          int b = 1 + rnd.nextInt(Math.min(MAX_STEP, MAX_VALUE - a));
          docs.add(a + "+" + b + "=" + (a + b) + "\n");
        } else if (kind < 4) {
          int a = 1 + rnd.nextInt(MAX_VALUE);
          int b = 1 + rnd.nextInt(Math.min(MAX_STEP, a));
          docs.add(a + "-" + b + "=" + (a - b) + "\n");
        } else {
          int a = rnd.nextInt(MAX_VALUE / 2 + 1);
          docs.add(a + "*2=" + (2 * a) + "\n");
        }
      }
    }
    return docs;
  }

  /**
   * {@code model.pretrainCorpus: chat}: one-step problems of the generic corpus's wording, each as the
   * conversation a tool-using chat harness has with the model in the builtin chat template ({@link
   * #toolConversation}: the question, a {@code calc} call on its one step, the tool's result, the
   * answer). No bare arithmetic lines (calc does the arithmetic) and still no multi-step question:
   * chaining steps is left to the harness, as with the generic corpus.
   */
  @Override
  public List<String> pretrainingCorpus(long corpusSeed, int documents, String corpus) {
    if (corpus == null) {
      return pretrainingCorpus(corpusSeed, documents);
    }
    if (!corpus.equals(CHAT_CORPUS)) {
      return Task.super.pretrainingCorpus(corpusSeed, documents, corpus);
    }
    Random rnd = new Random(corpusSeed ^ 0x4348415443L); // "CHATC": not the generic corpus's stream
    ChatTemplate template = ChatTemplate.builtin();
    List<String> docs = new ArrayList<>(documents);
    for (int i = 0; i < documents; i++) {
      Generated g = generate(rnd, 1, 1 + rnd.nextInt(MAX_VALUE - 1));
      docs.add(template.render(toolConversation(g.question, stepOf(g.question),
          Integer.toString(g.answer)), List.of(), false).text());
    }
    return docs;
  }

  /** The name {@code model.pretrainCorpus} gives the chat corpus. */
  public static final String CHAT_CORPUS = "chat";

  /**
   * One step solved with the calculator, as a chat harness with an empty system prompt renders it:
   * user question, assistant {@code calc} call, tool result, assistant answer.
   */
  public static List<Message> toolConversation(String question, String expression, String answer) {
    return List.of(Message.system(""), Message.user(question),
        Message.assistant("", List.of(new FunctionCall(CalcTool.NAME, Map.of("input", expression)))),
        Message.tool(CalcTool.NAME, answer), Message.assistant(answer));
  }

  private static final Pattern ONE_STEP = Pattern.compile(
      "has (\\d+) \\w+\\. \\w+ (?:(doubles)|(buys|finds|gets) (\\d+)|(?:gives|loses|eats) (\\d+))");

  /** The calc input of a one-step question of the generator's wording ("12+7"). */
  public static String stepOf(String question) {
    Matcher m = ONE_STEP.matcher(question);
    if (!m.find()) {
      throw new IllegalArgumentException("not a one-step question: " + question);
    }
    return m.group(2) != null ? m.group(1) + "*2"
        : m.group(3) != null ? m.group(1) + "+" + m.group(4) : m.group(1) + "-" + m.group(5);
  }

  private record Generated(String question, int answer) {}

  /** A problem with {@code ops} operations; every value stays in 0..MAX_VALUE. */
  private static Generated generate(Random rnd, int ops) {
    return generate(rnd, ops, -1);
  }

  /** As above, starting from {@code start} when it is not negative. */
  private static Generated generate(Random rnd, int ops, int start) {
    boolean female = rnd.nextBoolean();
    String[] names = female ? FEMALE : MALE;
    String name = names[rnd.nextInt(names.length)];
    String pronoun = female ? "She" : "He";
    String obj = OBJECTS[rnd.nextInt(OBJECTS.length)];
    int value = start >= 0 ? start : 2 + rnd.nextInt(MAX_START - 1);
    StringBuilder q = new StringBuilder();
    q.append(name).append(" has ").append(value).append(' ').append(obj).append('.');
    for (int i = 0; i < ops; i++) {
      int kind = rnd.nextInt(100);
      boolean canAdd = value <= MAX_VALUE - 1;
      boolean canSub = value >= 1;
      boolean canDouble = value >= 1 && value <= MAX_VALUE / 2;
      String sentence;
      if (kind < 12 && canDouble) {
        value = value * 2;
        sentence = pronoun + " doubles them.";
      } else if ((kind < 56 && canAdd) || !canSub) {
        int n = 1 + rnd.nextInt(Math.min(MAX_STEP, MAX_VALUE - value));
        value += n;
        String verb = switch (rnd.nextInt(3)) {
          case 0 -> "buys";
          case 1 -> "finds";
          default -> "gets";
        };
        sentence = pronoun + " " + verb + " " + n + " more.";
      } else {
        int n = 1 + rnd.nextInt(Math.min(MAX_STEP, value));
        value -= n;
        int verb = rnd.nextInt(EDIBLE.contains(obj) ? 3 : 2);
        if (verb == 0) {
          String other;
          do {
            String[] pool = rnd.nextBoolean() ? MALE : FEMALE;
            other = pool[rnd.nextInt(pool.length)];
          } while (other.equals(name));
          sentence = pronoun + " gives " + n + " to " + other + ".";
        } else if (verb == 1) {
          sentence = pronoun + " loses " + n + ".";
        } else {
          sentence = pronoun + " eats " + n + ".";
        }
      }
      q.append(' ').append(sentence);
    }
    q.append(" How many ").append(obj).append(" does ").append(name).append(" have?");
    return new Generated(q.toString(), value);
  }

  /** All questions of all splits (for disjointness checks). */
  public Set<String> allQuestions() {
    Set<String> all = new LinkedHashSet<>();
    for (List<TaskProblem> l : splits.values()) {
      for (TaskProblem p : l) {
        all.add(p.question());
      }
    }
    return all;
  }

  /**
   * The calculator: "a+b", "a-b" or "a*b" of integers (spaces allowed) gives the exact result; any
   * other input gives a line starting with "error:".
   */
  public static final class CalcTool implements Tool {
    public static final String NAME = "calc";
    private static final Pattern EXPRESSION = Pattern.compile("\\s*(-?\\d{1,9})\\s*([+*-])\\s*(-?\\d{1,9})\\s*");

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public String description() {
      return "evaluates a+b, a-b or a*b of two integers";
    }

    @Override
    public String apply(String input) {
      Matcher m = EXPRESSION.matcher(input == null ? "" : input);
      if (!m.matches()) {
        return "error: calc takes a+b, a-b or a*b of two integers, got '" + input + "'";
      }
      long a = Long.parseLong(m.group(1));
      long b = Long.parseLong(m.group(3));
      return Long.toString(switch (m.group(2)) {
        case "+" -> a + b;
        case "-" -> a - b;
        default -> a * b;
      });
    }
  }

  /** Splits text into sentences (ending in '.', '?' or '!' followed by space or end), one per line. */
  public static final class SentencesTool implements Tool {
    @Override
    public String name() {
      return "sentences";
    }

    @Override
    public String description() {
      return "splits the input into sentences, one per line";
    }

    @Override
    public String apply(String input) {
      if (input == null) {
        return "";
      }
      List<String> out = new ArrayList<>();
      StringBuilder cur = new StringBuilder();
      for (int i = 0; i < input.length(); i++) {
        char c = input.charAt(i);
        if (c == '\n' || c == '\r') {
          c = ' ';
        }
        cur.append(c);
        boolean end = (c == '.' || c == '?' || c == '!')
            && (i + 1 == input.length() || Character.isWhitespace(input.charAt(i + 1)));
        if (end) {
          String s = cur.toString().trim();
          if (!s.isEmpty()) {
            out.add(s);
          }
          cur.setLength(0);
        }
      }
      String rest = cur.toString().trim();
      if (!rest.isEmpty()) {
        out.add(rest);
      }
      return String.join("\n", out);
    }
  }
}
