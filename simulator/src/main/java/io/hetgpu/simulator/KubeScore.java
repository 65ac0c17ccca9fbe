package io.hetgpu.simulator;

/** kube-scheduler's own scoring, the part the simulation needs. */
final class KubeScore {

    /** How kube-scheduler weighs hetgpu's 0..10 score: times 10, times the extender weight in the shipped manifests. */
    static final int EXTENDER_WEIGHT = 5;

    private KubeScore() {
    }

    /** NodeResourcesFit LeastAllocated over GPUs: 0..100, the share of the node's GPUs still free after the pod. */
    static long leastAllocated(SimNode node, int freeGpus, int requested) {
        int capacity = node.gpus().size();
        if (capacity == 0) {
            return 0;
        }
        return (long) (freeGpus - requested) * 100 / capacity;
    }
}
