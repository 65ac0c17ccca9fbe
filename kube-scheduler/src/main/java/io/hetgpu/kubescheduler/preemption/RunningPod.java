package io.hetgpu.kubescheduler.preemption;

import io.hetgpu.kubescheduler.ResourceRequest;
import java.time.Instant;
import java.util.Map;

/**
 * A pod bound to a node, as preemption weighs it.
 *
 * @param startTime   {@code status.startTime}; a pod not started yet counts as starting now
 * @param terminating whether it has a deletion timestamp (evicted, still shutting down)
 */
public record RunningPod(String uid, String namespace, Map<String, String> labels, int priority, Instant startTime,
                         ResourceRequest request, boolean terminating) {

    public RunningPod {
        labels = Map.copyOf(labels);
    }

    /**
     * kube-scheduler's {@code MoreImportantPod}: the higher priority first, and between equals the one that started
     * earlier (it has done more work).
     */
    public static int moreImportantFirst(RunningPod a, RunningPod b) {
        int byPriority = Integer.compare(b.priority, a.priority);
        return byPriority != 0 ? byPriority : a.startTime.compareTo(b.startTime);
    }
}
