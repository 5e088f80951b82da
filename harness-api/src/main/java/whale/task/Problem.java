package whale.task;

/** What a harness sees of a problem: its id and its question. Never the answer. */
public record Problem(String id, String question) {}
