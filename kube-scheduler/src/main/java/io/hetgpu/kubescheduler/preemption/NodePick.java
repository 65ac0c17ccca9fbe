package io.hetgpu.kubescheduler.preemption;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * kube-scheduler's {@code pickOneNodeForPreemption}: among the candidates (victims most important first), the node
 * whose eviction breaks the fewest PodDisruptionBudgets; then the lowest highest victim priority; then the lowest sum
 * of victim priorities; then the fewest victims; then the latest start among the highest-priority victims (the least
 * work lost); then the first.
 */
public final class NodePick {

    private NodePick() {
    }

    /** The chosen node, or empty when there is no candidate. */
    public static String pickOne(Map<String, Victims> candidates) {
        if (candidates.isEmpty()) {
            return "";
        }
        var nodes = new ArrayList<>(candidates.keySet());
        // Each criterion as a score, higher better, as kube-scheduler writes them.
        List<ToLongFunction<Victims>> criteria = List.of(
                victims -> -victims.pdbViolations(),
                victims -> -(long) highestPriority(victims),
                victims -> -victims.pods().stream().mapToLong(pod -> (long) pod.priority() + Integer.MAX_VALUE + 1).sum(),
                victims -> -victims.pods().size(),
                victims -> earliestStartOfHighestPriority(victims).toEpochMilli());
        for (var criterion : criteria) {
            long best = nodes.stream().mapToLong(node -> criterion.applyAsLong(candidates.get(node))).max().orElseThrow();
            nodes.removeIf(node -> criterion.applyAsLong(candidates.get(node)) != best);
            if (nodes.size() == 1) {
                break;
            }
        }
        return nodes.getFirst();
    }

    private static int highestPriority(Victims victims) {
        return victims.pods().isEmpty() ? Integer.MIN_VALUE : victims.pods().getFirst().priority();
    }

    /** kube-scheduler's {@code GetEarliestPodStartTime}: the earliest start among the victims of the highest priority. */
    private static Instant earliestStartOfHighestPriority(Victims victims) {
        int highest = highestPriority(victims);
        return victims.pods().stream().filter(pod -> pod.priority() == highest).map(RunningPod::startTime)
                .min(Instant::compareTo).orElse(Instant.MAX);
    }
}
