package io.hetgpu.extender.service;

import io.hetgpu.extender.model.BoundPod;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The victims hetgpu names on a preemption candidate kube-scheduler proposes with none: from 1.38 kube-scheduler sends
 * the preempt verb the nodes where its own filters fit the pod as they are but an extender's filter refused it, each
 * with an empty victim list, and expects the extender to name the pods whose eviction makes room (a node that comes back
 * from every extender still without victims is dropped). kube-scheduler knows only the GPU count; hetgpu knows which
 * GPUs are free, their kind and their links, so it is the one to choose.
 *
 * <p>Chosen as kube-scheduler chooses its own victims: every pod below the preemptor's priority that holds GPUs there
 * removed, then each given back while the pod still fits without the rest: first those whose eviction would break a
 * PodDisruptionBudget, then the others, each group the most important first (higher priority, then the longer bound).
 * The victims that still break a budget are counted, as kube-scheduler counts {@code NumPDBViolations}. The loop is
 * bounded by the node's GPUs (a pod holding none is never a victim, and a node has at most 64), not by anything a pod
 * author writes.
 */
final class VictimsToFree {

    /** kube-scheduler's order of importance among victims: higher priority first, then the pod bound earlier. */
    private static final Comparator<BoundPod> MOST_IMPORTANT_FIRST = Comparator.comparingInt(BoundPod::priority).reversed()
            .thenComparing(BoundPod::boundAt);

    private VictimsToFree() {
    }

    /** The pods to evict, most important first, and how many of them break a PodDisruptionBudget. */
    record Choice(List<String> victims, long budgetsBroken) {
        static final Choice NONE = new Choice(List.of(), 0);
    }

    /**
     * @param bound       the pods bound to the node, as the extender's informers hold them
     * @param priority    the preemptor's {@code spec.priority}
     * @param evictable   of those pods, the UIDs whose eviction breaks no PodDisruptionBudget
     * @param fitsWithout whether the preemptor fits the node once the pods of these UIDs have let their GPUs go
     * @return the victims (none where the pod fits as it is); empty when even evicting every pod of lower priority
     *         leaves it no GPUs it can use
     */
    static Optional<Choice> choose(List<BoundPod> bound, int priority, Set<String> evictable, Predicate<Set<String>> fitsWithout) {
        var candidates = bound.stream()
                .filter(pod -> pod.priority() < priority && pod.gpuCount() > 0 && pod.releasedAt().equals(BoundPod.HOLDING) && !pod.binding())
                .sorted(MOST_IMPORTANT_FIRST).toList();
        var removed = new HashSet<String>();
        candidates.forEach(pod -> removed.add(pod.uid()));
        if (!fitsWithout.test(Set.copyOf(removed))) {
            return Optional.empty();
        }
        // Those that would break a budget are given back first, so that as few as possible do.
        var reprieveOrder = new ArrayList<BoundPod>(candidates.size());
        candidates.stream().filter(pod -> !evictable.contains(pod.uid())).forEach(reprieveOrder::add);
        candidates.stream().filter(pod -> evictable.contains(pod.uid())).forEach(reprieveOrder::add);
        var victims = new HashSet<String>();
        long broken = 0;
        for (var pod : reprieveOrder) {
            removed.remove(pod.uid());
            if (!fitsWithout.test(Set.copyOf(removed))) {
                removed.add(pod.uid());
                victims.add(pod.uid());
                if (!evictable.contains(pod.uid())) {
                    broken++;
                }
            }
        }
        return Optional.of(new Choice(candidates.stream().map(BoundPod::uid).filter(victims::contains).toList(), broken));
    }
}
