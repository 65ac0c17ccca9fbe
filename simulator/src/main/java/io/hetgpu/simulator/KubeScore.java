package io.hetgpu.simulator;

import io.hetgpu.kubescheduler.CpuMemory;
import io.hetgpu.kubescheduler.score.DefaultScore;

/** kube-scheduler's own scoring, the part the simulation needs: the test cluster's scheduler's, over the simulator's numbers. */
final class KubeScore {

    /** How kube-scheduler weighs hetgpu's 0..10 score: times 10, times the extender weight in the shipped manifests. */
    static final int EXTENDER_WEIGHT = 5;

    private KubeScore() {
    }

    /** NodeResourcesFit LeastAllocated plus BalancedAllocation over cpu and memory, with the pod on the node: 0..200. */
    static long of(ClusterState cluster, int node, Job.Pod pod) {
        return DefaultScore.score(cluster.requested(node).plus(pod.requests()), cluster.nodes().get(node).allocatable());
    }
}
