package io.hetgpu.extender.model;

import io.hetgpu.gpu.LinkMatrix;
import io.hetgpu.gpu.NodeTopology;
import io.hetgpu.gpu.allocation.GpuSetAllocator;
import io.hetgpu.gpu.tier.CardCatalog;
import io.hetgpu.gpu.tier.CardTier;
import java.util.List;

/**
 * A node's decoded inventory with everything derived from it that does not change until the
 * annotation does: the allocator and each device's tier. Built once per inventory text.
 *
 * @param topology    devices and links (no devices on a CPU-only node)
 * @param allocator   the shared allocator over the node's links
 * @param tiers       the tier of the device at each position
 * @param healthyMask positions of healthy devices
 * @param problem     why the inventory could not be read ("" when it could)
 */
public record NodeGpus(NodeTopology topology, GpuSetAllocator allocator, List<CardTier> tiers, long healthyMask, String problem) {

    public static final NodeGpus NONE = new NodeGpus(empty(), new GpuSetAllocator(empty().links()), List.of(), 0, "");

    public NodeGpus {
        tiers = List.copyOf(tiers);
    }

    public static NodeGpus of(NodeTopology topology, CardCatalog catalog) {
        long healthy = 0;
        var tiers = new java.util.ArrayList<CardTier>(topology.size());
        for (int i = 0; i < topology.size(); i++) {
            var device = topology.device(i);
            if (device.isHealthy()) {
                healthy |= 1L << i;
            }
            tiers.add(catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB()));
        }
        return new NodeGpus(topology, new GpuSetAllocator(topology.links()), tiers, healthy, "");
    }

    /** A node whose inventory annotation is unreadable: it offers no GPUs and says why. */
    public static NodeGpus unreadable(String problem) {
        return new NodeGpus(empty(), NONE.allocator(), List.of(), 0, problem);
    }

    public int size() {
        return topology.size();
    }

    private static NodeTopology empty() {
        return new NodeTopology("none", "none", List.of(), LinkMatrix.of(List.of()));
    }
}
