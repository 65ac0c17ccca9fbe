package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.NodeState;
import java.util.TreeSet;

/**
 * The cluster's top card tier and how many of its GPUs are free right now, across every node: what a
 * {@link HighPriorityReserve} is measured against.
 *
 * @param rank   the highest tier rank of any GPU in the cluster
 * @param models the card models of that tier, for reasons ("H100", "A100/H100")
 * @param free   free healthy GPUs of that tier, not held or promised to a pod
 */
public record TopTierHeadroom(int rank, String models, int free) {

    /** A cluster without GPUs: nothing to reserve. */
    public static final TopTierHeadroom NONE = new TopTierHeadroom(Integer.MIN_VALUE, "", 0);

    public static TopTierHeadroom of(Iterable<NodeState> nodes) {
        int top = Integer.MIN_VALUE;
        for (var node : nodes) {
            if (!node.gpus().source().knowsModel()) {
                // GPUs of unknown model have a made-up rank: no reason to keep them for anyone.
                continue;
            }
            for (var tier : node.gpus().tiers()) {
                top = Math.max(top, tier.rank());
            }
        }
        if (top == Integer.MIN_VALUE) {
            return NONE;
        }
        int free = 0;
        var models = new TreeSet<String>();
        for (var node : nodes) {
            if (!node.gpus().source().knowsModel()) {
                continue;
            }
            var tiers = node.gpus().tiers();
            for (int position = 0; position < tiers.size(); position++) {
                if (tiers.get(position).rank() == top) {
                    models.add(tiers.get(position).model());
                    free += (int) (node.freeMask() >>> position & 1);
                }
            }
        }
        return new TopTierHeadroom(top, String.join("/", models), free);
    }
}
