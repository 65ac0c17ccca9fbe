package io.hetgpu.extender.job;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Comparator;

/**
 * The order pods of one priority reach kube-scheduler's queue: in the order the API server created them. A creation
 * time is written to the second only, so pods created in the same second are told apart by their resourceVersion, which
 * the API server assigns in the order of its writes; the name settles the rest. Read wherever the order of a job's
 * waiting pods matters, so that it is the same whichever view lists them, in whatever order.
 */
public final class ArrivalOrder {

    /** Earlier created first. */
    public static final Comparator<Pod> PODS = Comparator
            .comparing((Pod pod) -> pod.getMetadata().getCreationTimestamp() == null ? "" : pod.getMetadata().getCreationTimestamp())
            .thenComparingLong(ArrivalOrder::writeOrder)
            .thenComparing(pod -> pod.getMetadata().getName());

    private ArrivalOrder() {
    }

    /** The resourceVersion as the number the API server counts writes with; a version that is no number sorts last. */
    private static long writeOrder(Pod pod) {
        var version = pod.getMetadata().getResourceVersion();
        if (version == null || version.isEmpty() || version.length() > 18 || !version.chars().allMatch(Character::isDigit)) {
            return Long.MAX_VALUE;
        }
        return Long.parseLong(version);
    }
}
