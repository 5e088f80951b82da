package whale.workflows;

/**
 * Payload of the {@code adjust} update: a change to a running experiment's limits. Null fields stay
 * as they are; at least one must be set.
 *
 * @param weightBudgetEpochs the new total weight budget in epochs of D_weight (not below what is spent)
 * @param patienceEpochs whale-adaptive: the weight phase's patience, in epochs
 * @param harnessPatience whale-adaptive: harness iterations without a strictly better best before a
 *     harness phase stops
 * @param harnessMaxIterations whale-adaptive: most iterations of a harness phase
 */
public record Adjustment(Double weightBudgetEpochs, Double patienceEpochs, Integer harnessPatience,
    Integer harnessMaxIterations) {}
