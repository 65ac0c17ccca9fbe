package io.hetgpu.extender.model;

import java.util.Objects;

/**
 * A node as the policy sees it for one request.
 *
 * @param name     node name
 * @param rack     the rack label's value ("" when unlabelled)
 * @param zone     the zone label's value ("" when unlabelled)
 * @param gpus     its GPUs ({@link NodeGpus#NONE} on a CPU-only node)
 * @param freeMask positions of healthy devices that no pod holds or has been promised
 */
public record NodeState(String name, String rack, String zone, NodeGpus gpus, long freeMask) {

    public NodeState {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(rack, "rack");
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(gpus, "gpus");
    }

    /** The node as it would be with these devices free as well (those that are healthy): what an eviction would leave. */
    public NodeState withFreed(long mask) {
        return mask == 0 ? this : new NodeState(name, rack, zone, gpus, (freeMask | mask) & gpus.healthyMask());
    }

    /** The node with these devices taken as well: what a planned pod would leave. */
    public NodeState withTaken(long mask) {
        return (freeMask & mask) == 0 ? this : new NodeState(name, rack, zone, gpus, freeMask & ~mask);
    }

    /** A node with GPUs (or one that claims GPUs through an unreadable inventory). */
    public boolean isGpuNode() {
        return gpus.size() > 0 || !gpus.problem().isEmpty();
    }

    public int freeCount() {
        return Long.bitCount(freeMask);
    }
}
