package io.hetgpu.extender.policy;

import io.hetgpu.gpu.CardModel;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * An admin's table of how fast each workload class runs on each card model (any unit, as long as one
 * class uses one unit: steps/s, images/s). A pod naming its class in {@code hetgpu.io/workload} is then
 * ranked by its own speed on the cards instead of by card tier, because a newer card is not always a
 * faster one (Gavel measured recommendation models running slower on V100 than on K80 or P100).
 *
 * <p>With a {@code minimumShare}, such a pod is also kept off cards where it runs below that share of its
 * speed on its class's fastest listed card: it waits for a better card instead. Without preemption a
 * job started on a card ten times slower holds that card ten times longer, which under load costs more
 * than the wait (the simulator measures both).
 *
 * <p>The table the policy reads is the admin's merged with what the extender learned
 * ({@code io.hetgpu.extender.throughput.LearnedTable#merged}); a figure that is only a prior (the class has never run
 * on that card: its speed elsewhere times the card's relative speed) is listed in {@code priors}, so that low-priority
 * pods may explore it and explanations can say so.
 *
 * @param table        workload class (lower case) -> normalised card model -> throughput (> 0)
 * @param minimumShare 0 (off) up to below 1: the least share of the class's fastest listed speed a card must give
 * @param priors       workload class (lower case) -> the card models whose figure in {@code table} is a prior
 */
public record WorkloadThroughputs(Map<String, Map<String, Double>> table, double minimumShare, Map<String, Set<String>> priors) {

    /** No table: every pod is ranked by card tier. */
    public static final WorkloadThroughputs NONE = new WorkloadThroughputs(Map.of());

    /** A table that ranks cards but keeps none out. */
    public WorkloadThroughputs(Map<String, Map<String, Double>> table) {
        this(table, 0);
    }

    /** A table of measured (or admin-given) figures alone. */
    public WorkloadThroughputs(Map<String, Map<String, Double>> table, double minimumShare) {
        this(table, minimumShare, Map.of());
    }

    public WorkloadThroughputs {
        if (!(minimumShare >= 0 && minimumShare < 1)) {
            throw new IllegalArgumentException("minimumSpeedShare: expected at least 0 and below 1, got " + minimumShare);
        }
        var copy = new LinkedHashMap<String, Map<String, Double>>();
        for (var entry : table.entrySet()) {
            var byModel = new LinkedHashMap<String, Double>();
            for (var card : entry.getValue().entrySet()) {
                double value = card.getValue() == null ? Double.NaN : card.getValue();
                if (!(value > 0) || Double.isInfinite(value)) {
                    throw new IllegalArgumentException("workloads." + entry.getKey() + "." + card.getKey()
                            + ": expected a throughput above 0, got " + card.getValue());
                }
                byModel.put(CardModel.fromProductName(card.getKey()), value);
            }
            copy.put(className(entry.getKey()), Map.copyOf(byModel));
        }
        table = Map.copyOf(copy);
        var priorCopy = new LinkedHashMap<String, Set<String>>();
        for (var entry : priors.entrySet()) {
            var models = new TreeSet<String>();
            entry.getValue().forEach(model -> models.add(CardModel.fromProductName(model)));
            priorCopy.put(className(entry.getKey()), Set.copyOf(models));
        }
        priors = Map.copyOf(priorCopy);
    }

    /** How a class name is compared: case and surrounding blanks do not matter. */
    public static String className(String workload) {
        return workload.strip().toLowerCase(Locale.ROOT);
    }

    public boolean isEmpty() {
        return table.isEmpty();
    }

    /** The class's throughput on a card model, or 0 when the table does not say. */
    public double of(String workload, String model) {
        var byModel = table.get(className(workload));
        if (byModel == null) {
            return 0;
        }
        return byModel.getOrDefault(model, 0.0);
    }

    public WorkloadThroughputs withMinimumShare(double share) {
        return new WorkloadThroughputs(table, share, priors);
    }

    /** The class's fastest listed card model, or "" for a class the table does not know. */
    public String fastestCard(String workload) {
        var byModel = table.getOrDefault(className(workload), Map.of());
        return byModel.entrySet().stream().max(Map.Entry.<String, Double>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey).orElse("");
    }

    /** The class's fastest card model among figures that are not priors (measured or the admin's), or "". */
    public String fastestKnownCard(String workload) {
        var guessed = priors.getOrDefault(className(workload), Set.of());
        var byModel = table.getOrDefault(className(workload), Map.of());
        return byModel.entrySet().stream().filter(entry -> !guessed.contains(entry.getKey()))
                .max(Map.Entry.<String, Double>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey).orElse("");
    }

    /**
     * The class runs on this card model below {@link #minimumShare} of its fastest listed speed. A card the
     * table does not list is never judged too slow: nothing is known about it; nor is one whose figure is only a prior,
     * and a prior is never the fastest speed judged against: a guess keeps no pod off a card.
     */
    public boolean tooSlow(String workload, String model) {
        double speed = of(workload, model);
        return minimumShare > 0 && speed > 0 && !isPrior(workload, model)
                && speed < minimumShare * of(workload, fastestKnownCard(workload));
    }

    public boolean knows(String workload) {
        return !workload.isBlank() && table.containsKey(className(workload));
    }

    /** The class's figure on this card model is only a prior: the class has never run there. */
    public boolean isPrior(String workload, String model) {
        return priors.getOrDefault(className(workload), Set.of()).contains(model);
    }
}
