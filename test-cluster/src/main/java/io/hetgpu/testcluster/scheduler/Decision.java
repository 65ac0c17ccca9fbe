package io.hetgpu.testcluster.scheduler;

import java.util.List;
import java.util.Map;
import java.util.Set;

/** What one scheduling attempt of one pod came to. */
public sealed interface Decision {

    String pod();

    /**
     * The pod goes to {@code node}.
     *
     * @param totals       every feasible node's total score (plugin scores plus weighted extender scores)
     * @param pluginScores every feasible node's score from kube-scheduler's own plugins alone, the part of
     *                     its total that is not the extenders'
     * @param byExtender   an extender's bind verb bound it (and recorded its devices), not kube-scheduler's binder
     */
    record Bound(String pod, String node, Map<String, Long> totals, Map<String, Long> pluginScores, boolean byExtender) implements Decision {
        public Bound {
            totals = Map.copyOf(totals);
            pluginScores = Map.copyOf(pluginScores);
        }

        /** Chosen, for kube-scheduler's own binder to bind. */
        public Bound(String pod, String node, Map<String, Long> totals, Map<String, Long> pluginScores) {
            this(pod, node, totals, pluginScores, false);
        }
    }

    /**
     * No node fits; {@code message} reads like kube-scheduler's FailedScheduling event
     * ("0/6 nodes are available: 4 Insufficient nvidia.com/gpu, 2 …").
     */
    record Unschedulable(String pod, String message, Map<String, String> reasons, Set<String> unresolvable) implements Decision {
        public Unschedulable {
            reasons = Map.copyOf(reasons);
            unresolvable = Set.copyOf(unresolvable);
        }
    }

    /**
     * No node fits, and kube-scheduler's preemption evicted {@code victims} (namespace/name) on {@code node}, which it
     * nominates for the pod: the pod is tried again once they are gone.
     */
    record Nominated(String pod, String node, List<String> victims, String message) implements Decision {
        public Nominated {
            victims = List.copyOf(victims);
        }
    }

    /** The attempt itself failed (a non-ignorable extender did not answer). */
    record Failed(String pod, String error) implements Decision {
    }
}
