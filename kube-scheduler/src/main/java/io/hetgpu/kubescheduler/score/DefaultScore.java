package io.hetgpu.kubescheduler.score;

import io.hetgpu.kubescheduler.CpuMemory;
import io.hetgpu.kubescheduler.ResourceRequest;
import io.hetgpu.kubescheduler.SchedulingNode;
import java.util.List;

/**
 * kube-scheduler's default scoring as far as it shapes GPU placement: NodeResourcesFit with the
 * LeastAllocated strategy over cpu and memory (weight 1 each), plus NodeResourcesBalancedAllocation,
 * each 0..100 and each plugin weighted 1. Both spread pods over the emptiest nodes, which is what a
 * cluster without hetgpu does. Extended resources such as {@code nvidia.com/gpu} are not scored: the
 * default configuration scores cpu and memory only.
 *
 * <p>The arithmetic is kube-scheduler's own ({@code leastResourceScorer}, {@code balancedResourceScorer}):
 * integer division for LeastAllocated, a float standard deviation truncated for BalancedAllocation. The
 * test cluster's scheduler and the simulator both score through {@link #score(CpuMemory, CpuMemory)}, so
 * the two cannot drift apart.
 */
public final class DefaultScore {

    /** framework.MaxNodeScore. */
    static final long MAX_NODE_SCORE = 100;

    private DefaultScore() {
    }

    /**
     * @param requested   what the node's pods request, the pod being scheduled included
     * @param allocatable the node's allocatable cpu and memory
     * @return LeastAllocated plus BalancedAllocation, 0..200
     */
    public static long score(CpuMemory requested, CpuMemory allocatable) {
        return leastAllocated(requested, allocatable) + balancedAllocation(requested, allocatable);
    }

    static long leastAllocated(CpuMemory requested, CpuMemory allocatable) {
        long sum = 0;
        long weights = 0;
        if (allocatable.milliCpu() != 0) {
            sum += leastRequested(requested.milliCpu(), allocatable.milliCpu());
            weights++;
        }
        if (allocatable.memory() != 0) {
            sum += leastRequested(requested.memory(), allocatable.memory());
            weights++;
        }
        return weights == 0 ? 0 : sum / weights;
    }

    private static long leastRequested(long requested, long capacity) {
        return requested > capacity ? 0 : (capacity - requested) * MAX_NODE_SCORE / capacity;
    }

    static long balancedAllocation(CpuMemory requested, CpuMemory allocatable) {
        if (allocatable.milliCpu() == 0 || allocatable.memory() == 0) {
            // One fraction (or none): no spread between resources, so a deviation of 0.
            return MAX_NODE_SCORE;
        }
        double cpu = Math.min(1.0, (double) requested.milliCpu() / allocatable.milliCpu());
        double memory = Math.min(1.0, (double) requested.memory() / allocatable.memory());
        double deviation = Math.abs((cpu - memory) / 2);
        return (long) ((1 - deviation) * MAX_NODE_SCORE);
    }

    /** The same over a node's allocatable, the requests of the pods already on it, and the pod's. */
    public static long score(ResourceRequest pod, SchedulingNode node, List<ResourceRequest> podsOnNode) {
        var requested = CpuMemory.of(pod);
        for (var other : podsOnNode) {
            requested = requested.plus(CpuMemory.of(other));
        }
        return score(requested, CpuMemory.of(node.allocatable("cpu"), node.allocatable("memory")));
    }
}
