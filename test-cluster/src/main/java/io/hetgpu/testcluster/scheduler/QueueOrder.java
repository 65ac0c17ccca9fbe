package io.hetgpu.testcluster.scheduler;

import io.fabric8.kubernetes.api.model.Pod;
import io.hetgpu.extender.job.ArrivalOrder;
import java.util.Comparator;
import java.util.Objects;

/**
 * The order kube-scheduler's active queue takes pods in (its PrioritySort plugin): higher {@code spec.priority} first,
 * then the pod that entered the queue first. Pods enter as the scheduler's informer delivers them, in the order the
 * API server created them; a creation time is only written to the second, so pods created in the same second are
 * told apart by their resourceVersion, which the API server assigns in the order of its writes.
 *
 * <p>Why not by name: two job controllers creating their pods at once interleave them (one job's first pod, the
 * other's first pod, then the second pods), and kube-scheduler takes them in that order. Sorted by name, the first
 * job's pods would all come before the second's, and the deadlock that interleaving causes would never show.
 * A pod that fails an attempt goes back with the time of its failure, which in a driver that tries every pending pod
 * once per round keeps this same order.
 */
final class QueueOrder {

    static final Comparator<Pod> KUBE_SCHEDULER = Comparator
            .comparingInt((Pod pod) -> -Objects.requireNonNullElse(pod.getSpec().getPriority(), 0))
            .thenComparing(ArrivalOrder.PODS);

    private QueueOrder() {
    }
}
