package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.gpu.allocation.DeviceMask;
import io.hetgpu.gpu.allocation.GpuSet;
import java.util.List;

/**
 * A node that passed the filters, with what it would give the pod.
 *
 * @param node      the node
 * @param set       the GPU set the shared allocator would pick (empty for a pod without GPUs)
 * @param tierRank  the tier of the weakest card in that set (0 when the set is empty)
 * @param spareMask the node's healthy GPUs that pass the pod's device filters, taken or not (every healthy GPU for a
 *                  pod without GPUs), less the set: the cards the job's other pods, asking alike, could have there
 */
public record Candidate(NodeState node, GpuSet set, int tierRank, long spareMask) {

    static final GpuSet NO_GPUS = new GpuSet(List.of(), 0, 0, false);

    /**
     * @param eligibleMask the node's healthy GPUs that pass the pod's device filters, taken or not
     */
    static Candidate of(NodeState node, GpuSet set, int tierRank, long eligibleMask) {
        // The set's mask once per assessment: the job score asks for the spare GPUs of every candidate for every member.
        return new Candidate(node, set, tierRank, eligibleMask & ~DeviceMask.of(set.positions()));
    }

    public String name() {
        return node.name();
    }

    /** The card model the set is made of, for explanations ("" when none). */
    public String model() {
        return set.size() == 0 ? "" : node.gpus().topology().device(set.positions().getFirst()).model();
    }

    /**
     * The eligible GPUs free on {@code state} (this node now, or as preemption could leave it) besides the pod's own set:
     * the room left there for the job's pods that still wait.
     */
    public int spareGpus(NodeState state) {
        return Long.bitCount(spareMask & state.freeMask());
    }
}
