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
 * @param kinds       the distinct kinds of device on the node
 * @param kindMasks   positions of the devices of each kind
 * @param summary     "8 V100 (16 GiB, cc 7.0)": the node's cards for reasons, written once per inventory
 */
public record NodeGpus(NodeTopology topology, GpuSetAllocator allocator, List<CardTier> tiers, long healthyMask, String problem,
                       List<DeviceKind> kinds, long[] kindMasks, String summary) {

    public static final NodeGpus NONE = new NodeGpus(empty(), new GpuSetAllocator(empty().links()), List.of(), 0, "", List.of(), new long[0], "no GPUs");

    public NodeGpus {
        tiers = List.copyOf(tiers);
        kinds = List.copyOf(kinds);
        kindMasks = kindMasks.clone();
    }

    /**
     * What the device filters look at, shared by every GPU of one product on a node (usually all of them),
     * so a request checks each kind once instead of every device.
     *
     * @param example one device of this kind
     */
    public record DeviceKind(String model, long memoryMiB, io.hetgpu.gpu.ComputeCapability computeCapability, io.hetgpu.gpu.GpuDevice example) {

        @Override
        public boolean equals(Object other) {
            return other instanceof DeviceKind kind && kind.memoryMiB == memoryMiB && kind.model.equals(model)
                    && kind.computeCapability.equals(computeCapability);
        }

        @Override
        public int hashCode() {
            return model.hashCode() * 31 + Long.hashCode(memoryMiB) * 17 + computeCapability.hashCode();
        }
    }

    public static NodeGpus of(NodeTopology topology, CardCatalog catalog) {
        long healthy = 0;
        var tiers = new java.util.ArrayList<CardTier>(topology.size());
        var kinds = new java.util.LinkedHashMap<DeviceKind, Long>();
        for (int i = 0; i < topology.size(); i++) {
            var device = topology.device(i);
            if (device.isHealthy()) {
                healthy |= 1L << i;
            }
            tiers.add(catalog.tierOf(device.model(), device.computeCapability(), device.memoryMiB()));
            kinds.merge(new DeviceKind(device.model(), device.memoryMiB(), device.computeCapability(), device), 1L << i, (a, b) -> a | b);
        }
        return new NodeGpus(topology, new GpuSetAllocator(topology.links()), tiers, healthy, "",
                List.copyOf(kinds.keySet()), kinds.values().stream().mapToLong(Long::longValue).toArray(),
                DeviceSummary.of(topology.devices()));
    }

    /** A node whose inventory annotation is unreadable: it offers no GPUs and says why. */
    public static NodeGpus unreadable(String problem) {
        return new NodeGpus(empty(), NONE.allocator(), List.of(), 0, problem, List.of(), new long[0], "no readable GPU inventory");
    }

    public int size() {
        return topology.size();
    }

    private static NodeTopology empty() {
        return new NodeTopology("none", "none", List.of(), LinkMatrix.of(List.of()));
    }
}
