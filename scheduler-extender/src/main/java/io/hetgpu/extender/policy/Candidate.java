package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import io.hetgpu.gpu.allocation.GpuSet;
import java.util.List;

/**
 * A node that passed the filters, with what it would give the pod.
 *
 * @param node     the node
 * @param set      the GPU set the shared allocator would pick (empty for a pod without GPUs)
 * @param tierRank the tier of the weakest card in that set (0 when the set is empty)
 */
public record Candidate(NodeState node, GpuSet set, int tierRank) {

    static final GpuSet NO_GPUS = new GpuSet(List.of(), 0, 0, false);

    public String name() {
        return node.name();
    }

    /** The card model the set is made of, for explanations ("" when none). */
    public String model() {
        return set.size() == 0 ? "" : node.gpus().topology().device(set.positions().getFirst()).model();
    }
}
