package whale.workflows.activities;

import java.util.List;

/**
 * Pins {@code held} for {@code run} (replacing the run's previous pin) and deletes each of
 * {@code released} that no run's pin holds. Idempotent: a retry rewrites the same pin and finds the
 * deleted objects gone.
 *
 * @param run the run's workflow id, the pin's owner
 * @param held every checkpoint the run may still refer to
 * @param released checkpoints the run held before and holds no more
 */
public record RetainRequest(String run, List<String> held, List<String> released) {}
