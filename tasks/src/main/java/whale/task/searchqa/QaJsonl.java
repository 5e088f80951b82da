package whale.task.searchqa;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import whale.task.Jsonl;
import whale.task.Jsonl.MalformedFileException;

/**
 * Readers for question-answering JSONL in the shapes SearchQA, Natural Questions (open), HotpotQA,
 * TriviaQA and Search-R1/FlashRAG exports use. Liberal in field names, strict in structure: every
 * non-blank line must be a JSON object with a non-empty question string and at least one non-empty
 * answer string, or the file is rejected with its name and line number.
 *
 * <ul>
 *   <li>question: {@code question}, {@code query} or {@code question_text};
 *   <li>answers: {@code answers}, {@code answer}, {@code golden_answers} or {@code gold_answers}: a
 *       string, a list of strings, or objects holding them in {@code text}, {@code value} or
 *       {@code aliases} (SQuAD's and TriviaQA's shapes).
 * </ul>
 *
 * <p>Corpus lines: {@code {"id","title","text"}}; the text may also be called {@code contents}
 * (Pyserini), {@code content}, {@code body} or {@code passage}; id and title are optional.
 */
public final class QaJsonl {
  static final List<String> QUESTION_FIELDS = List.of("question", "query", "question_text");
  static final List<String> ANSWER_FIELDS = List.of("answers", "answer", "golden_answers", "gold_answers");
  static final List<String> TEXT_FIELDS = List.of("text", "contents", "content", "body", "passage");
  static final List<String> DOC_ID_FIELDS = List.of("id", "_id", "docid", "doc_id");

  private QaJsonl() {}

  /** A question with every gold answer. */
  public record Question(String question, List<String> answers) {}

  /** Every question of a QA JSONL file, in file order. */
  public static List<Question> readQuestions(Path file) {
    List<Question> out = new ArrayList<>();
    Jsonl.forEachObject(file, (line, o) -> {
      String q = Jsonl.requiredString(file, line, o, QUESTION_FIELDS, "question");
      JsonNode a = Jsonl.first(o, ANSWER_FIELDS);
      if (a == null) {
        throw new MalformedFileException(file, line, "no answer field (one of " + ANSWER_FIELDS + ")");
      }
      List<String> answers = new ArrayList<>();
      collectAnswers(file, line, a, answers, 0);
      if (answers.isEmpty()) {
        throw new MalformedFileException(file, line, "no non-empty answer");
      }
      out.add(new Question(q, List.copyOf(answers)));
    });
    if (out.isEmpty()) {
      throw new IllegalArgumentException(file + ": no questions");
    }
    return out;
  }

  /** Every document of a corpus JSONL file, in file order. */
  public static void readCorpus(Path file, Consumer<SearchIndex.Entry> sink) {
    long[] count = {0};
    Jsonl.forEachObject(file, (line, o) -> {
      String text = Jsonl.requiredString(file, line, o, TEXT_FIELDS, "document text");
      JsonNode title = o.get("title");
      if (title != null && !title.isNull() && !title.isTextual()) {
        throw new MalformedFileException(file, line, "title must be a string");
      }
      JsonNode id = Jsonl.first(o, DOC_ID_FIELDS);
      sink.accept(new SearchIndex.Entry(id == null || id.isNull() ? "line-" + line : id.asText(),
          title == null || title.isNull() ? "" : title.asText(), text));
      count[0]++;
    });
    if (count[0] == 0) {
      throw new IllegalArgumentException(file + ": no documents");
    }
  }

  private static void collectAnswers(Path file, long line, JsonNode a, List<String> out, int depth) {
    if (depth > 3) {
      throw new MalformedFileException(file, line, "answers nested too deeply");
    }
    if (a.isTextual()) {
      if (!a.asText().isBlank() && !out.contains(a.asText().trim())) {
        out.add(a.asText().trim());
      }
    } else if (a.isNumber()) {
      out.add(a.asText()); // "answer": 1969
    } else if (a.isArray()) {
      for (JsonNode x : a) {
        collectAnswers(file, line, x, out, depth + 1);
      }
    } else if (a.isObject()) {
      boolean any = false;
      for (String k : List.of("text", "value", "aliases")) {
        if (a.has(k)) {
          collectAnswers(file, line, a.get(k), out, depth + 1);
          any = true;
        }
      }
      if (!any) {
        throw new MalformedFileException(file, line, "an answer object needs text, value or aliases");
      }
    } else {
      throw new MalformedFileException(file, line, "answers must be strings, got " + a.getNodeType());
    }
  }
}
