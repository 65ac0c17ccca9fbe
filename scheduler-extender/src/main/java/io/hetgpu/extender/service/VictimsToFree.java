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
 * removed, then each given back, the most important first (higher priority, then the longer bound), while the pod still
 * fits without the rest. The loop is bounded by the node's GPUs (a pod holding none is never a victim, and a node has at
 * most 64), not by anything a pod author writes.
 */
final class VictimsToFree {

    /** kube-scheduler's order of importance among victims: higher priority first, then the pod bound earlier. */
    private static final Comparator<BoundPod> MOST_IMPORTANT_FIRST = Comparator.comparingInt(BoundPod::priority).reversed()
            .thenComparing(BoundPod::boundAt);

    private VictimsToFree() {
    }

    /**
     * @param bound       the pods bound to the node, as the extender's informers hold them
     * @param priority    the preemptor's {@code spec.priority}
     * @param fitsWithout whether the preemptor fits the node once the pods of these UIDs have let their GPUs go
     * @return the UIDs to evict, most important first (empty where the pod fits as it is); empty when even evicting every
     *         pod of lower priority leaves it no GPUs it can use
     */
    static Optional<List<String>> choose(List<BoundPod> bound, int priority, Predicate<Set<String>> fitsWithout) {
        var candidates = bound.stream()
                .filter(pod -> pod.priority() < priority && pod.gpuCount() > 0 && pod.releasedAt().equals(BoundPod.HOLDING) && !pod.binding())
                .sorted(MOST_IMPORTANT_FIRST).toList();
        var removed = new HashSet<String>();
        candidates.forEach(pod -> removed.add(pod.uid()));
        if (!fitsWithout.test(Set.copyOf(removed))) {
            return Optional.empty();
        }
        var victims = new ArrayList<String>();
        for (var pod : candidates) {
            removed.remove(pod.uid());
            if (!fitsWithout.test(Set.copyOf(removed))) {
                removed.add(pod.uid());
                victims.add(pod.uid());
            }
        }
        return Optional.of(List.copyOf(victims));
    }
}
