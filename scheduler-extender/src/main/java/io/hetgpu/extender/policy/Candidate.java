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
 * @param linkScore  the set's link score
 * @param linksKnown whether the node's links were measured (hetgpu's device plugin) rather than guessed
 * @param takenAfter the share of the node's GPUs that no pod could be given once this one holds the set
 *
 * <p>The last three are the node's and the set's, kept here flat: a whole job's plan scores the same few thousand
 * candidates for each of its members, and reading them through the node and the set was a cache miss or two each time.
 */
public record Candidate(NodeState node, GpuSet set, int tierRank, long spareMask, long linkScore, boolean linksKnown,
                        double takenAfter) {

    static final GpuSet NO_GPUS = new GpuSet(List.of(), 0, 0, false);

    /**
     * @param eligibleMask the node's healthy GPUs that pass the pod's device filters, taken or not
     */
    static Candidate of(NodeState node, GpuSet set, int tierRank, long eligibleMask) {
        // The set's mask once per assessment: the job score asks for the spare GPUs of every candidate for every member.
        int size = node.gpus().size();
        double takenAfter = size == 0 ? 0 : (size - node.freeCount() + set.size()) / (double) size;
        return new Candidate(node, set, tierRank, eligibleMask & ~DeviceMask.of(set.positions()), set.linkScore(),
                node.gpus().source().knowsNvlink(), takenAfter);
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
