package io.hetgpu.extender.policy;

import io.hetgpu.extender.explain.LearnedSpeedWords;
import io.hetgpu.extender.explain.PodSpeeds;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.extender.throughput.ThroughputSource;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;

/**
 * The admin's {@code evictForFasterCards}: when kube-scheduler preempts, a high-priority pod refuses free cards on
 * which it runs below this share of its speed on the cards preemption could free for it, so that kube-scheduler
 * reaches preemption instead of starting it on old cards while lower-priority work holds the new ones. The preempt
 * verb then keeps the newest of those cards and, among them, the eviction that destroys the least work; the filter
 * and the verb judge by the same tiers, so they agree. Without a throughput table for the pod's workload, every older
 * tier counts as slower.
 *
 * @param share 0 (off) up to 1: the least share of the reachable speed a free card must give
 */
public record EvictionFloor(double share) {

    public static final EvictionFloor NONE = new EvictionFloor(0);

    public EvictionFloor {
        if (!(share >= 0 && share <= 1)) {
            throw new IllegalArgumentException("evictForFasterCards: expected a share from 0 (off) to 1, got " + share);
        }
    }

    public boolean isOn() {
        return share > 0;
    }

    /**
     * The tiers closed to the pod: those below the lowest tier that runs it at {@code share} or more of its speed on the
     * best set preemption can free ({@code reachable}: one candidate per node, every lower-priority pod's GPUs counted
     * free), for a high-priority pod that needs GPUs ({@link PlacementPolicy#evictionFloor} asks only for those);
     * {@link HighPriorityReserve.ClosedTier#NONE} when preemption frees nothing better.
     */
    HighPriorityReserve.ClosedTier closedTo(PodRequest pod, ThroughputSource.Snapshot speeds, List<Candidate> reachable) {
        if (!isOn() || reachable.isEmpty()) {
            return HighPriorityReserve.ClosedTier.NONE;
        }
        var reason = String.format(Locale.ROOT,
                "faster cards are free, or preemption can free them, for this high-priority pod (it refuses cards below %.0f %% of their speed)", 100 * share);
        var throughputs = speeds.table();
        if (throughputs.knows(pod.workload())) {
            // Its own speeds decide: every card model it runs below the share of the fastest set preemption can free.
            double best = 0;
            String fastest = null;
            for (var candidate : reachable) {
                double speed = throughputs.of(pod.workload(), candidate.model());
                if (speed > best) {
                    best = speed;
                    fastest = candidate.model();
                }
            }
            var figures = PodSpeeds.of(pod.workload(), speeds);
            var slow = new HashMap<String, String>();
            for (var model : throughputs.table().get(WorkloadThroughputs.className(pod.workload())).keySet()) {
                if (throughputs.of(pod.workload(), model) < share * best) {
                    slow.put(model, withFigures(pod, figures, fastest, model).orElse(reason));
                }
            }
            return best == 0 || slow.isEmpty() ? HighPriorityReserve.ClosedTier.NONE : HighPriorityReserve.ClosedTier.models(slow, reason);
        }
        int bestRank = reachable.stream().mapToInt(Candidate::tierRank).max().orElse(Integer.MIN_VALUE);
        return bestRank == Integer.MIN_VALUE ? HighPriorityReserve.ClosedTier.NONE : HighPriorityReserve.ClosedTier.below(bestRank, reason);
    }

    /** The refusal of a slow card said with the figures: "faster cards are free, …: lstm runs 1.3x faster per GPU on P100 than on V100 (…)". */
    private java.util.Optional<String> withFigures(PodRequest pod, PodSpeeds figures, String fastest, String slow) {
        var faster = fastest == null ? java.util.Optional.<PodSpeeds.Figure>empty() : figures.on(fastest);
        var slower = figures.on(slow);
        if (faster.isEmpty() || slower.isEmpty()) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(String.format(Locale.ROOT,
                "faster cards are free, or preemption can free them, for this high-priority pod: %s (it refuses cards below %.0f %% of their speed)",
                LearnedSpeedWords.faster(WorkloadThroughputs.className(pod.workload()), faster.get(), slower.get()), 100 * share));
    }
}
