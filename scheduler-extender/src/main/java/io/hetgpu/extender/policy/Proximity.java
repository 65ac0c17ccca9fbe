package io.hetgpu.extender.policy;

import io.hetgpu.extender.model.DataLocality;
import io.hetgpu.extender.model.NodeState;
import io.hetgpu.extender.model.PeerLocation;

/** Closeness on the node > rack > zone scale shared by job and data locality. */
final class Proximity {

    static final double SAME_NODE = 1.0;
    static final double SAME_RACK = 0.6;
    static final double SAME_ZONE = 0.3;

    private Proximity() {
    }

    static double to(NodeState node, PeerLocation peer) {
        if (node.name().equals(peer.node())) {
            return SAME_NODE;
        }
        if (!node.rack().isEmpty() && node.rack().equals(peer.rack())) {
            return SAME_RACK;
        }
        if (!node.zone().isEmpty() && node.zone().equals(peer.zone())) {
            return SAME_ZONE;
        }
        return 0;
    }

    static double to(NodeState node, DataLocality data) {
        if (data.nodes().contains(node.name())) {
            return SAME_NODE;
        }
        if (data.racks().contains(node.rack())) {
            return SAME_RACK;
        }
        if (data.zones().contains(node.zone())) {
            return SAME_ZONE;
        }
        return 0;
    }
}
