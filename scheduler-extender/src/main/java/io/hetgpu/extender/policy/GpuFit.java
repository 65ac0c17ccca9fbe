package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;
import io.hetgpu.gpu.allocation.GpuSet;

/**
 * A pod against a node's GPUs, after the device filters have narrowed them.
 *
 * @param pod          the pod
 * @param node         the node
 * @param eligibleMask healthy devices that pass every device filter (model, memory, compute capability)
 * @param freeMask     those of them that are free
 * @param offer        the set the shared allocator picks from the free ones (NVLink-connected when the pod
 *                     asks for it), or null when there is none
 */
public record GpuFit(PodRequest pod, NodeState node, long eligibleMask, long freeMask, GpuSet offer) {

    /** The fit of a pod on a node whose suitable healthy devices are {@code eligibleMask}. */
    public static GpuFit of(PodRequest pod, NodeState node, long eligibleMask) {
        long free = node.freeMask() & eligibleMask;
        var offer = Long.bitCount(free) < pod.gpuCount() ? null
                : node.gpus().allocator().choose(free, 0, pod.gpuCount(), pod.requireNvlink()).orElse(null);
        return new GpuFit(pod, node, eligibleMask, free, offer);
    }

    public int eligibleCount() {
        return Long.bitCount(eligibleMask);
    }

    public int freeCount() {
        return Long.bitCount(freeMask);
    }
}
