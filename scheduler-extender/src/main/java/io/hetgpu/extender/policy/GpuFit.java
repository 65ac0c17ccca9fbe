package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PodRequest;

/**
 * A pod against a node's GPUs, after the device filters have narrowed them.
 *
 * @param pod          the pod
 * @param node         the node
 * @param eligibleMask healthy devices that pass every device filter (model, memory, compute capability)
 * @param freeMask     those of them that are free
 */
public record GpuFit(PodRequest pod, NodeState node, long eligibleMask, long freeMask) {

    public int eligibleCount() {
        return Long.bitCount(eligibleMask);
    }

    public int freeCount() {
        return Long.bitCount(freeMask);
    }
}
