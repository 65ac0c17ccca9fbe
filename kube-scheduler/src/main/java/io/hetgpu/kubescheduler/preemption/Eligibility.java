package io.hetgpu.kubescheduler.preemption;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** kube-scheduler's {@code PodEligibleToPreemptOthers}. */
public final class Eligibility {

    private Eligibility() {
    }

    /**
     * Why the pod may not preempt now, or empty when it may: it never preempts, or it already preempted on its
     * nominated node and lower-priority pods there are still terminating (it waits for them rather than evict more).
     *
     * @param nominatedUnresolvable whether the nominated node now refuses the pod for a reason no eviction fixes;
     *                              then the pod may look elsewhere
     */
    public static Optional<String> check(Preemptor preemptor, Map<String, List<RunningPod>> podsByNode, boolean nominatedUnresolvable) {
        if (preemptor.neverPreempts()) {
            return Optional.of("not eligible due to preemptionPolicy=Never.");
        }
        var nominated = preemptor.nominatedNodeName();
        if (!nominated.isEmpty() && !nominatedUnresolvable) {
            boolean waiting = podsByNode.getOrDefault(nominated, List.of()).stream()
                    .anyMatch(pod -> pod.terminating() && pod.priority() < preemptor.priority());
            if (waiting) {
                return Optional.of("not eligible due to a terminating pod on the nominated node.");
            }
        }
        return Optional.empty();
    }
}
