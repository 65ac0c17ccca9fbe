package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import java.util.Map;
import java.util.TreeMap;

/**
 * Free healthy GPUs of each card model across the cluster, not held or promised to a pod: how much room each tier
 * has left, for the free-GPUs gauge. Nodes whose model is unknown (only an allocatable count) are left out, as in
 * {@link TopTierHeadroom}: their GPUs belong to no tier.
 */
public final class FreeGpusByModel {

    private FreeGpusByModel() {
    }

    public static Map<String, Integer> of(Iterable<NodeState> nodes) {
        var free = new TreeMap<String, Integer>();
        for (var node : nodes) {
            if (!node.gpus().source().knowsModel()) {
                continue;
            }
            var tiers = node.gpus().tiers();
            for (int position = 0; position < tiers.size(); position++) {
                int isFree = (int) (node.freeMask() >>> position & 1);
                free.merge(tiers.get(position).model(), isFree, Integer::sum);
            }
        }
        return free;
    }
}
