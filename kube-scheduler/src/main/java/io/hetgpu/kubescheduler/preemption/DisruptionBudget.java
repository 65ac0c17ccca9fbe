package io.hetgpu.kubescheduler.preemption;

import java.util.Map;
import java.util.Set;

/**
 * A PodDisruptionBudget as preemption reads it: the pods its selector picks in its namespace, how many of them may
 * still be disrupted ({@code status.disruptionsAllowed}), and those already being disrupted, which evicting again
 * costs nothing ({@code status.disruptedPods}).
 */
public record DisruptionBudget(String namespace, Map<String, String> matchLabels, int disruptionsAllowed, Set<String> disruptedPods) {

    public DisruptionBudget {
        matchLabels = Map.copyOf(matchLabels);
        disruptedPods = Set.copyOf(disruptedPods);
    }

    /** An empty selector selects nothing here, as in kube-scheduler's filterPodsWithPDBViolation. */
    boolean covers(RunningPod pod) {
        return pod.namespace().equals(namespace) && !matchLabels.isEmpty()
                && matchLabels.entrySet().stream().allMatch(label -> label.getValue().equals(pod.labels().get(label.getKey())));
    }
}
