package io.hetgpu.testcluster.throughputs;

import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearnedState;
import io.hetgpu.extender.throughput.LearnedTable;
import io.hetgpu.extender.throughput.LearningSettings;
import io.hetgpu.extender.throughput.ThroughputLearner;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * What {@code hetgpu throughputs} shows: per workload class, each card model's figure per GPU, the samples it rests on,
 * whether it is only a prior, and its share of the class's fastest card, all as the extender computes them from the same
 * persisted state (its own learner restores the state; the share is the one {@code policy.minimumSpeedShare} compares).
 *
 * @param configMap    namespace/name of the ConfigMap read
 * @param cluster      the API server's address
 * @param found        the ConfigMap exists (else nothing has been learned, or learning is off)
 * @param classes      classes in name order
 * @param clusterCards the card models the cluster's nodes have, or null when the nodes could not be read
 * @param notes        what could not be read or was left out, one sentence each
 */
record ThroughputReport(String configMap, String cluster, boolean found, List<ClassFigures> classes, Set<String> clusterCards,
                        List<String> notes) {

    ThroughputReport {
        classes = List.copyOf(classes);
        clusterCards = clusterCards == null ? null : Set.copyOf(clusterCards);
        notes = List.copyOf(notes);
    }

    /**
     * @param fastest the class's fastest card it has run on: the card {@code policy.minimumSpeedShare} takes a share of
     * @param cards   fastest first
     */
    record ClassFigures(String workloadClass, String fastest, List<CardFigure> cards) {
        ClassFigures {
            cards = List.copyOf(cards);
        }

        /** Samples behind the class's figures, all cards together. */
        int samples() {
            return cards.stream().mapToInt(CardFigure::samples).sum();
        }
    }

    /**
     * @param perGpu    the class's own unit of work per second on one GPU
     * @param samples   runs the figure rests on (0 for a prior)
     * @param podGpus   the size of the pods the figure was measured on, as the learner keeps them apart: "1", "2-4" or
     *                  "5+" GPUs; "" for a prior
     * @param prior     the class never ran on this card: its figure elsewhere scaled by the cards' relative speeds
     * @param ofBest    the figure over the class's fastest card's (above 1 for a prior faster than any card it ran on)
     * @param onCluster the cluster's nodes have this card (null when the nodes could not be read)
     */
    record CardFigure(String card, double perGpu, int samples, String podGpus, boolean prior, double ofBest, Boolean onCluster) {
    }

    /** A figure's pod size as the report says it: "1", "2-4", "5+" ({@link LearnedTable.LearnedSpeed#gpus}), "" for a prior. */
    static String podGpus(LearnedTable.LearnedSpeed speed) {
        return switch (speed.gpus()) {
            case 0 -> "";
            case 1 -> "1";
            case 2 -> "2-4";
            default -> "5+";
        };
    }

    /**
     * Bounds wide enough to keep what any extender's configuration keeps (its limits on windows, namespaces and
     * classes), so the command shows what the document holds; the namespace bound is the default one, which decides a
     * figure only where exactly two namespaces reported on one card.
     */
    static final LearningSettings SHOWN = new LearningSettings(true, 0, 1024, 1024, 4096, LearningSettings.DEFAULTS.outlierFactor(),
            LearningSettings.DEFAULTS.outlierMinSamples(), LearningSettings.DEFAULTS.maxNamespaceInfluence(), true);

    /** The report of a persisted state; {@code clusterCards} null when unknown. */
    static ThroughputReport of(String configMap, String cluster, LearnedState state, Set<String> clusterCards, List<String> notes) {
        var learner = new ThroughputLearner(SHOWN);
        learner.restore(state);
        var table = learner.table();
        var allNotes = new ArrayList<>(notes);
        int given = samples(state);
        // What the learner keeps of it, every size bucket included (the table's counts are of the bucket a figure comes from).
        int kept = samples(learner.state());
        if (kept < given) {
            allNotes.add((given - kept) + " of the document's " + given + " samples are left out, as the extender leaves them out:"
                    + " a class name, card model, namespace or figure the learner refuses, or beyond its bounds");
        }
        return new ThroughputReport(configMap, cluster, true, classes(table, clusterCards), clusterCards, allNotes);
    }

    /** No ConfigMap: nothing learned yet. */
    static ThroughputReport nothing(String configMap, String cluster, List<String> notes) {
        return new ThroughputReport(configMap, cluster, false, List.of(), null, notes);
    }

    /** Each class's figures with their share of its fastest card, as the policy reads the learned table alone; fastest first. */
    static List<ClassFigures> classes(LearnedTable table, Set<String> clusterCards) {
        var policy = table.merged(WorkloadThroughputs.NONE);
        var classes = new ArrayList<ClassFigures>();
        table.byClass().forEach((workload, row) -> {
            // The share policy.minimumSpeedShare compares: of the fastest card the class has run on, never of a prior.
            var known = policy.fastestKnownCard(workload);
            var fastest = known.isEmpty() ? policy.fastestCard(workload) : known;
            double best = policy.of(workload, fastest);
            var cards = new ArrayList<CardFigure>();
            row.forEach((card, speed) -> cards.add(new CardFigure(card, speed.throughputPerGpu(), speed.samples(), podGpus(speed), speed.prior(),
                    best > 0 ? speed.throughputPerGpu() / best : 0, clusterCards == null ? null : clusterCards.contains(card))));
            cards.sort(Comparator.comparingDouble(CardFigure::perGpu).reversed().thenComparing(CardFigure::card));
            classes.add(new ClassFigures(workload, fastest, cards));
        });
        return classes;
    }

    /** Samples a state holds, valid or not: a window summarised to fit the ConfigMap counts the runs it stands for. */
    private static int samples(LearnedState state) {
        int count = 0;
        for (var workload : state.classes()) {
            for (var card : workload.cards()) {
                for (var namespace : card.namespaces()) {
                    count += namespace.runs();
                }
            }
        }
        return count;
    }
}
