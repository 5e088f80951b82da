package whale.task.searchqa;

import java.util.List;

/** A second opinion on answers that normalized exact match rejects (e.g. an LLM judge). */
public interface AnswerJudge {
  boolean accepts(String question, List<String> goldAnswers, String answer);
}
