package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Map;
import java.util.Set;

/**
 * One pod's scheduling attempt: what it came to, and every node refused on the way with why, by kube-scheduler's own
 * filters or an extender's (a {@link Decision.Bound} pod too was refused on other nodes first).
 *
 * @param refused      node name to the reason it was refused
 * @param unresolvable the refused nodes no preemption could make fit
 * @param preemption   why kube-scheduler's preemption found nothing to evict for the pod; "" when it was not tried or
 *                     nominated a node ({@link Decision.Nominated})
 */
public record Attempt(Pod pod, Decision decision, Map<String, String> refused, Set<String> unresolvable, String preemption) {

    public Attempt {
        refused = Map.copyOf(refused);
        unresolvable = Set.copyOf(unresolvable);
    }

    Attempt(Pod pod, Decision decision, Map<String, String> refused, Set<String> unresolvable) {
        this(pod, decision, refused, unresolvable, "");
    }

    /** The same attempt come to another end (bound by the extender, or preemption tried, with what it found). */
    Attempt endingIn(Decision ending, String preempted) {
        return new Attempt(pod, ending, refused, unresolvable, preempted);
    }
}
