package io.hetgpu.simulator;

import io.hetgpu.extender.model.NodeState;
import java.util.ArrayList;
import java.util.List;

/** Which GPUs of each node are free, as the simulation runs. The one mutable thing in a run. */
final class ClusterState {

    private final List<SimNode> nodes;
    private final long[] free;
    private int freeGpus;

    ClusterState(ClusterInventory inventory) {
        this.nodes = inventory.nodes();
        this.free = new long[nodes.size()];
        for (int i = 0; i < free.length; i++) {
            free[i] = nodes.get(i).gpus().healthyMask();
            freeGpus += Long.bitCount(free[i]);
        }
    }

    List<SimNode> nodes() {
        return nodes;
    }

    long free(int node) {
        return free[node];
    }

    int freeGpus() {
        return freeGpus;
    }

    /** Every node as the extender's policy sees it now. */
    List<NodeState> states() {
        var states = new ArrayList<NodeState>(nodes.size());
        for (int i = 0; i < free.length; i++) {
            var node = nodes.get(i);
            states.add(new NodeState(node.name(), node.rack(), "", node.gpus(), free[i]));
        }
        return states;
    }

    /** Takes devices; a device already taken is a simulator bug, never silently double-booked. */
    void take(int node, long mask) {
        if ((free[node] & mask) != mask) {
            throw new IllegalStateException("GPUs " + Long.toBinaryString(mask) + " of " + nodes.get(node).name()
                    + " double-booked (free " + Long.toBinaryString(free[node]) + ")");
        }
        free[node] &= ~mask;
        freeGpus -= Long.bitCount(mask);
    }

    void give(int node, long mask) {
        if ((free[node] & mask) != 0) {
            throw new IllegalStateException("GPUs of " + nodes.get(node).name() + " released twice");
        }
        free[node] |= mask;
        freeGpus += Long.bitCount(mask);
    }
}
