package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;

/**
 * The cluster's GPUs, how many of them are free now, and the smaller work waiting: what a {@link JobHeadroom} is
 * measured against.
 *
 * @param all            every GPU of every node
 * @param free           those not held by a pod or promised to one
 * @param smallerWaiting the GPUs that pods in no job, each of fewer GPUs than the pod judged, wait for together
 */
public record ClusterGpus(int all, int free, int smallerWaiting) {

    public ClusterGpus(int all, int free) {
        this(all, free, 0);
    }

    public static ClusterGpus of(Iterable<NodeState> nodes) {
        int all = 0;
        int free = 0;
        for (var node : nodes) {
            all += node.gpus().size();
            free += node.freeCount();
        }
        return new ClusterGpus(all, free);
    }

    public ClusterGpus withSmallerWaiting(int gpus) {
        return new ClusterGpus(all, free, gpus);
    }
}
