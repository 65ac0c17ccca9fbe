package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.SchedulingNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's {@code DryRunPreemption}: victims chosen on the nodes that might become feasible, walked from
 * {@code offset} round the list, until enough candidates are found (at least one that breaks no
 * PodDisruptionBudget); candidates that break none come first. A candidate has at least one victim.
 */
public final class Candidates {

    private Candidates() {
    }

    /**
     * @param potentialNodes the nodes whose filter failure an eviction might fix (not UnschedulableAndUnresolvable)
     * @param offset         where the walk starts, in 0..potentialNodes.size()-1 (kube-scheduler draws it at random)
     */
    public static Map<String, Victims> find(Preemptor preemptor, List<SchedulingNode> potentialNodes, Map<String, List<RunningPod>> podsByNode,
                                            List<DisruptionBudget> budgets, VictimSelection.Fit fit, CandidateSampling sampling, int offset) {
        int wanted = sampling.numCandidates(potentialNodes.size());
        var respecting = new ArrayList<Map.Entry<String, Victims>>();
        var violating = new ArrayList<Map.Entry<String, Victims>>();
        for (int i = 0; i < potentialNodes.size(); i++) {
            var node = potentialNodes.get((offset + i) % potentialNodes.size());
            var victims = VictimSelection.onNode(preemptor, node, podsByNode.getOrDefault(node.name(), List.of()), budgets, fit);
            // A node the preemptor fits without evicting anything is no candidate ("expected at least one victim pod on
            // node"): what refused it there is no filter of kube-scheduler's, and no eviction changes it.
            if (victims.isEmpty() || victims.get().pods().isEmpty()) {
                continue;
            }
            (victims.get().pdbViolations() == 0 ? respecting : violating).add(Map.entry(node.name(), victims.get()));
            if (!respecting.isEmpty() && respecting.size() + violating.size() >= wanted) {
                break;
            }
        }
        var candidates = new LinkedHashMap<String, Victims>();
        respecting.forEach(entry -> candidates.put(entry.getKey(), entry.getValue()));
        violating.forEach(entry -> candidates.put(entry.getKey(), entry.getValue()));
        return candidates;
    }
}
