package io.hetgpu.kubescheduler.preemption;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

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
        // Each criterion orders the candidates better last, as kube-scheduler's scores do. The start is compared as an
        // instant, not in epoch milliseconds: a candidate without victims starts at Instant.MAX, which no long holds.
        List<Comparator<Victims>> criteria = List.of(
                Comparator.comparingLong(victims -> -victims.pdbViolations()),
                Comparator.comparingLong(victims -> -(long) highestPriority(victims)),
                Comparator.comparingLong(victims -> -victims.pods().stream().mapToLong(pod -> (long) pod.priority() + Integer.MAX_VALUE + 1).sum()),
                Comparator.comparingLong(victims -> -victims.pods().size()),
                Comparator.comparing(NodePick::earliestStartOfHighestPriority));
        for (var criterion : criteria) {
            var best = nodes.stream().map(candidates::get).max(criterion).orElseThrow();
            nodes.removeIf(node -> criterion.compare(candidates.get(node), best) != 0);
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
