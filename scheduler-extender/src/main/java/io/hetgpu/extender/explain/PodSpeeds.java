package io.hetgpu.extender.explain;

import io.hetgpu.extender.policy.Candidate;
import io.hetgpu.extender.policy.WorkloadThroughputs;
import io.hetgpu.extender.throughput.LearnedTable;
import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.Optional;

/**
 * One pod's speeds as the policy read them when it placed the pod: its workload class's figure on each card model, and
 * where each figure comes from (learned from runs, a prior, the admin's table), so that an explanation can give the
 * figure the decision rested on. Pure lookups over one snapshot of the table.
 *
 * @param workload the pod's class as the table names it (lower case), "" for a pod that names none
 * @param table    the table the policy read (the admin's rows merged over the learned ones)
 * @param learned  the learned figures behind it, with their sample counts
 */
public record PodSpeeds(String workload, WorkloadThroughputs table, LearnedTable learned) {

    /** No figures: explanations speak of tiers alone. */
    public static final PodSpeeds NONE = new PodSpeeds("", WorkloadThroughputs.NONE, LearnedTable.EMPTY);

    /** Where a figure comes from. */
    public enum Source {
        /** Measured from runs of the class on that card. */
        LEARNED,
        /** The class never ran on that card: its figures elsewhere scaled by relative card speeds. */
        PRIOR,
        /** The admin's {@code policy.workloads} row. */
        CONFIGURED
    }

    /**
     * The class's figure on one card model.
     *
     * @param samples runs it rests on (0 unless {@link Source#LEARNED})
     */
    public record Figure(String card, double perGpu, int samples, Source source) {
    }

    /** The speeds of a pod of class {@code workload} in {@code snapshot}; {@link #NONE} when the snapshot does not know the class. */
    public static PodSpeeds of(String workload, ThroughputSource.Snapshot snapshot) {
        if (snapshot == null || workload == null || !snapshot.table().knows(workload)) {
            return NONE;
        }
        return new PodSpeeds(WorkloadThroughputs.className(workload), snapshot.table(), snapshot.learned());
    }

    public boolean knowsClass() {
        return !workload.isEmpty() && table.knows(workload);
    }

    /** The class's figure on {@code card}, or empty when the table has none. */
    public Optional<Figure> on(String card) {
        double perGpu = knowsClass() ? table.of(workload, card) : 0;
        if (!(perGpu > 0)) {
            return Optional.empty();
        }
        if (table.isPrior(workload, card)) {
            return Optional.of(new Figure(card, perGpu, 0, Source.PRIOR));
        }
        var speed = learned.byClass().getOrDefault(workload, java.util.Map.of()).get(card);
        // The merged table copies a learned figure as it is: an equal figure is the learned one, another the admin's.
        if (speed != null && !speed.prior() && speed.throughputPerGpu() == perGpu) {
            return Optional.of(new Figure(card, perGpu, speed.samples(), Source.LEARNED));
        }
        return Optional.of(new Figure(card, perGpu, 0, Source.CONFIGURED));
    }

    /**
     * The figure of the slowest card of the set a candidate offers (synchronous training waits for it; the tier scorer
     * ranks by it too), or empty for a set without GPUs or with a card the table lacks.
     */
    public Optional<Figure> on(Candidate candidate) {
        if (!knowsClass() || candidate == null || candidate.set().size() == 0) {
            return Optional.empty();
        }
        var topology = candidate.node().gpus().topology();
        Figure slowest = null;
        for (int position : candidate.set().positions()) {
            var figure = on(topology.device(position).model());
            if (figure.isEmpty()) {
                return Optional.empty();
            }
            if (slowest == null || figure.get().perGpu() < slowest.perGpu()) {
                slowest = figure.get();
            }
        }
        return Optional.ofNullable(slowest);
    }

    /** The class's fastest measured (or admin-given) card's figure: the one {@code minimumSpeedShare} is a share of. */
    public Optional<Figure> fastestKnown() {
        return knowsClass() ? on(table.fastestKnownCard(workload)) : Optional.empty();
    }
}
