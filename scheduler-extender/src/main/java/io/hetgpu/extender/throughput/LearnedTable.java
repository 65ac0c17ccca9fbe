package io.hetgpu.extender.throughput;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the learner knows at one moment: per workload class (lower case) and card model, the class's throughput per
 * GPU, how many samples it rests on, and whether it is only a prior (0 samples: the class's figure on the cards it
 * ran on times the card's relative speed, {@link CardPriors}). A class that never ran anywhere has no row.
 *
 * @param version grows with every change of the learner's figures: memos computed from an older table are stale
 */
public record LearnedTable(long version, Map<String, Map<String, LearnedSpeed>> byClass) {

    public static final LearnedTable EMPTY = new LearnedTable(0, Map.of());

    /**
     * @param throughputPerGpu the figure (> 0), in the class's own unit per second per GPU
     * @param samples          samples it rests on (0 for a prior)
     * @param prior            the class never ran on this card: the figure is extrapolated
     * @param gpus             the size of the pods it was measured on, as the learner keeps them apart: 1 (one GPU), 2
     *                         (2 to 4) or 5 (5 and more); 0 for a prior
     */
    public record LearnedSpeed(double throughputPerGpu, int samples, boolean prior, int gpus) {

        /** A figure of one-GPU pods, or a prior. */
        public LearnedSpeed(double throughputPerGpu, int samples, boolean prior) {
            this(throughputPerGpu, samples, prior, prior ? 0 : 1);
        }

        /** The pod size in words: "1 GPU", "2-4 GPUs", "5+ GPUs", "" for a prior. */
        public String podSize() {
            return switch (gpus) {
                case 0 -> "";
                case 1 -> "1 GPU";
                case 2 -> "2-4 GPUs";
                default -> "5+ GPUs";
            };
        }
    }

    public LearnedTable {
        var copy = new TreeMap<String, Map<String, LearnedSpeed>>();
        byClass.forEach((workload, row) -> copy.put(workload, Map.copyOf(new TreeMap<>(row))));
        byClass = java.util.Collections.unmodifiableMap(copy);
    }

    /**
     * The table the policy reads: the admin's {@code configured} rows win whole (a class the admin lists keeps the
     * admin's figures and unit; learned figures, possibly in another unit, are not mixed into its row), and priors
     * fill the cards a row lacks, from that row's own figures. The configured {@code minimumShare} is kept.
     */
    public WorkloadThroughputs merged(WorkloadThroughputs configured) {
        var table = new LinkedHashMap<String, Map<String, Double>>();
        var priors = new HashMap<String, Set<String>>();
        byClass.forEach((workload, row) -> {
            var figures = new LinkedHashMap<String, Double>();
            var guessed = new HashSet<String>();
            row.forEach((card, speed) -> {
                figures.put(card, speed.throughputPerGpu());
                if (speed.prior()) {
                    guessed.add(card);
                }
            });
            table.put(workload, figures);
            priors.put(workload, guessed);
        });
        configured.table().forEach((workload, row) -> {
            var figures = new LinkedHashMap<>(row);
            var guessed = new HashSet<String>();
            for (var card : CardPriors.models()) {
                if (!figures.containsKey(card)) {
                    double guess = CardPriors.extrapolate(row, card);
                    if (guess > 0 && Double.isFinite(guess)) {
                        figures.put(card, guess);
                        guessed.add(card);
                    }
                }
            }
            table.put(workload, figures);
            priors.put(workload, guessed);
        });
        return new WorkloadThroughputs(table, configured.minimumShare(), priors);
    }
}
